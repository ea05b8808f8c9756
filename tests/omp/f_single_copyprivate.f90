! f_single_copyprivate.f90 - "single" with "copyprivate", and "single"
! with "nowait".
!
! The thread that runs the single sets its private variables; copyprivate
! copies them to every other thread's before any leaves the construct
! (gfortran passes the addresses of the executing thread's privates, on
! its stack, through GOMP_single_copy_start/end).  Variables: an integer,
! a real(8), a derived type, an array of 16 integer(8), a character
! string, an allocatable array (allocated by the single, copied to every
! thread's own allocation) and a pointer to an array the single allocated
! (every thread reads the same target); 20 rounds.  Then 50 singles with
! nowait in a row, each run once.
module f_single_copyprivate_data
  implicit none
  integer, parameter :: rounds = 20, alen = 16
  type pair
     integer(8) :: a
     real(8) :: b
  end type pair
  integer :: execs(rounds) = 0
  integer :: nowait_execs(50) = 0
end module f_single_copyprivate_data

program f_single_copyprivate
  use omp_lib
  use omptest
  use f_single_copyprivate_data
  implicit none
  integer :: nt, r, k, wrong
  integer :: iv
  real(8) :: dv
  type(pair) :: pv
  integer(8) :: arr(alen)
  character(len=12) :: sv
  real(8), allocatable :: av(:)
  integer(8), pointer :: block(:)

  call ot_start('f_single_copyprivate')
  nt = ot_team_size()
  call ot_print_int('threads', nt)
  wrong = 0

  !$omp parallel private(r, k, iv, dv, pv, arr, sv, av, block) reduction(+:wrong)
  block => null()
  do r = 1, rounds
     iv = -1
     dv = -1
     pv = pair(-1, -1d0)
     arr = -1
     sv = 'unset'
     if (allocated(av)) deallocate (av)
     !$omp single
     execs(r) = execs(r) + 1
     iv = 1000 + r
     dv = 0.25d0 * r
     pv = pair(77_8 * r, 1.5d0 * r)
     arr = [(int(r, 8) * alen + k, k = 1, alen)]
     write (sv, '(a,i0)') 'round ', r
     allocate (av(r))
     av = dble(r)
     allocate (block(alen))
     block = [(int(r, 8) * 100 + k, k = 1, alen)]
     !$omp end single copyprivate(iv, dv, pv, arr, sv, av, block)
     if (iv /= 1000 + r .or. dv /= 0.25d0 * r .or. pv%a /= 77_8 * r &
          .or. pv%b /= 1.5d0 * r) wrong = wrong + 1
     if (any(arr /= [(int(r, 8) * alen + k, k = 1, alen)])) wrong = wrong + 1
     if (sv /= 'round ' // trim(adjustl(itoa(r)))) wrong = wrong + 1
     if (.not. allocated(av)) then
        wrong = wrong + 1
     else if (size(av) /= r .or. any(av /= dble(r))) then
        wrong = wrong + 1
     end if
     if (.not. associated(block)) then
        wrong = wrong + 1
     else if (any(block /= [(int(r, 8) * 100 + k, k = 1, alen)])) then
        wrong = wrong + 1
     end if
     ! Everybody has read the block before it is freed.
     !$omp barrier
     !$omp single
     deallocate (block)
     !$omp end single
  end do
  do r = 1, 50
     !$omp single
     nowait_execs(r) = nowait_execs(r) + 1
     !$omp end single nowait
  end do
  !$omp end parallel

  call ot_check_int('wrong values after copyprivate', wrong, 0)
  call ot_check_int('singles not run exactly once', count(execs /= 1), 0)
  call ot_check_int('single nowait not run exactly once', count(nowait_execs /= 1), 0)
  call ot_print_int('rounds', rounds)
  call ot_print_int('wrong', wrong)
  call ot_print_int('single nowait runs', sum(nowait_execs))
  call ot_finish()

contains

  character(len=12) function itoa(v)
    integer, intent(in) :: v
    write (itoa, '(i0)') v
  end function itoa
end program f_single_copyprivate
