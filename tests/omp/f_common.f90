! f_common.f90 - COMMON blocks shared by the team.
!
! A named COMMON block with a 2-D array and scalars, initialised by a
! BLOCK DATA unit (.data) and by the initial thread; the blank COMMON with
! 50,000 doubles (.bss).  Every thread fills its share of each array, and
! after a barrier reads every other thread's share; external subroutines
! that declare the same blocks (with other local names, as old codes do)
! run an orphaned "do" over them and a reduction; 10 rounds, the initial
! thread changing a scalar between regions that the team must see.
block data f_common_init
  implicit none
  integer :: nx, ny, round
  real(8) :: grid(64, 32), scale
  common /f_common_grid/ grid, scale, nx, ny, round
  data nx /64/, ny /32/, round /0/, scale /0.5d0/
end block data f_common_init

! The orphaned loop: its own names for the blocks' members.
subroutine f_common_fill(t)
  implicit none
  integer, intent(in) :: t
  integer :: mx, my, rnd, i
  real(8) :: g(64, 32), s
  real(8) :: big(50000)
  common /f_common_grid/ g, s, mx, my, rnd
  common big
  !$omp do schedule(static)
  do i = 1, 50000
     big(i) = dble(i) * s + rnd
  end do
  !$omp end do nowait
  ! The columns of this thread: j with mod(j - 1, nthreads) == t.
  do i = t + 1, my, omp_num()
     g(:, i) = dble(i) + rnd
  end do
contains
  integer function omp_num()
    use omp_lib
    omp_num = omp_get_num_threads()
  end function omp_num
end subroutine f_common_fill

! Sum of the blank COMMON, an orphaned reduction.
subroutine f_common_sum(total)
  implicit none
  real(8), intent(inout) :: total
  real(8) :: big(50000)
  integer :: i
  common big
  !$omp do schedule(dynamic, 1000) reduction(+:total)
  do i = 1, 50000
     total = total + big(i)
  end do
  !$omp end do
end subroutine f_common_sum

program f_common
  use omp_lib
  use omptest
  implicit none
  integer, parameter :: rounds = 10
  integer :: nx, ny, round
  real(8) :: grid(64, 32), scale
  common /f_common_grid/ grid, scale, nx, ny, round
  real(8) :: big(50000)
  common big
  integer :: nt, r, bad
  real(8) :: total, want

  call ot_start('f_common')
  nt = ot_team_size()
  call ot_print_int('threads', nt)
  call ot_check_int('COMMON nx from BLOCK DATA', nx, 64)
  call ot_check_int('COMMON ny from BLOCK DATA', ny, 32)
  call ot_check_dbl('COMMON scale from BLOCK DATA', scale, 0.5d0)

  do r = 1, rounds
     round = r
     total = 0
     bad = 0
     !$omp parallel reduction(+:bad)
     call f_common_fill(omp_get_thread_num())
     !$omp barrier
     call check_all(bad)
     call f_common_sum(total)
     !$omp end parallel
     call ot_check_int('COMMON values wrong after the barrier', bad, 0)
     ! sum of i/2 + r over 1..50000
     want = 0.5d0 * 50000 * 50001 / 2 + 50000d0 * r
     call ot_check_dbl('sum of the blank COMMON', total, want)
     call ot_check_dbl('grid(64, 32) after the region', grid(64, 32), 32d0 + r)
  end do

  call ot_print_dbl('blank COMMON sum', total)
  call ot_print_dbl('grid sum', sum(grid))
  call ot_finish()

contains

  ! Every element of both blocks, whoever wrote it.
  subroutine check_all(bad)
    integer, intent(inout) :: bad
    integer :: i, j
    do j = 1, ny
       do i = 1, nx
          if (grid(i, j) /= dble(j) + round) bad = bad + 1
       end do
    end do
    do i = 1, 50000, 7
       if (big(i) /= dble(i) * scale + round) bad = bad + 1
    end do
  end subroutine check_all
end program f_common
