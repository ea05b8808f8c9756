! f_ordered.f90 - "ordered" in a "do ordered" loop.
!
! The ordered blocks of a loop run one at a time in the order of the
! iterations, whatever the schedule: each appends its iteration to a
! shared list (no other synchronisation: ordered is the only guard), and
! the list must come out in sequential order, with work outside the
! ordered block in between.  Schedules static, static 3, dynamic,
! dynamic 4, guided, runtime (dynamic, 2); a downward loop with a stride;
! "parallel do ordered" and "do ordered" in a region.
module f_ordered_data
  implicit none
  integer, parameter :: n = 300
  integer :: list(n), len = 0
  integer(8) :: work(n)
contains
  subroutine reset()
    list = 0
    len = 0
    work = 0
  end subroutine reset

  ! Iteration it ran its ordered block.
  subroutine record(it)
    integer, intent(in) :: it
    len = len + 1
    if (len <= n) list(len) = it
  end subroutine record
end module f_ordered_data

program f_ordered
  use omp_lib
  use omptest
  use f_ordered_data
  implicit none
  integer :: nt, i
  integer(8) :: total

  call ot_start('f_ordered')
  nt = ot_team_size()
  call ot_print_int('threads', nt)

  call reset()
  !$omp parallel do ordered schedule(static)
  do i = 1, n
     work(i) = int(i, 8) * i
     !$omp ordered
     call record(i)
     !$omp end ordered
  end do
  !$omp end parallel do
  call check('static', .false.)

  call reset()
  !$omp parallel do ordered schedule(static, 3)
  do i = 1, n
     work(i) = int(i, 8) * i
     !$omp ordered
     call record(i)
     !$omp end ordered
  end do
  !$omp end parallel do
  call check('static,3', .false.)

  call reset()
  !$omp parallel do ordered schedule(dynamic)
  do i = 1, n
     work(i) = int(i, 8) * i
     !$omp ordered
     call record(i)
     !$omp end ordered
  end do
  !$omp end parallel do
  call check('dynamic', .false.)

  call reset()
  !$omp parallel do ordered schedule(dynamic, 4)
  do i = 1, n
     work(i) = int(i, 8) * i
     !$omp ordered
     call record(i)
     !$omp end ordered
  end do
  !$omp end parallel do
  call check('dynamic,4', .false.)

  call reset()
  !$omp parallel do ordered schedule(guided)
  do i = 1, n
     work(i) = int(i, 8) * i
     !$omp ordered
     call record(i)
     !$omp end ordered
  end do
  !$omp end parallel do
  call check('guided', .false.)

  call omp_set_schedule(omp_sched_dynamic, 2)
  call reset()
  !$omp parallel do ordered schedule(runtime)
  do i = 1, n
     work(i) = int(i, 8) * i
     !$omp ordered
     call record(i)
     !$omp end ordered
  end do
  !$omp end parallel do
  call check('runtime dynamic,2', .false.)

  ! Downward, stride 2: n, n-2, ..., 2 recorded as their order number.
  call reset()
  !$omp parallel do ordered schedule(dynamic, 3)
  do i = n, 1, -2
     work(i) = int(i, 8) * i
     !$omp ordered
     call record((n - i) / 2 + 1)
     !$omp end ordered
  end do
  !$omp end parallel do
  call check('downward dynamic,3', .true.)

  ! "do ordered" inside a region, twice, the second with nowait.
  call reset()
  !$omp parallel
  !$omp do ordered schedule(static, 1)
  do i = 1, n / 2
     work(i) = int(i, 8) * i
     !$omp ordered
     call record(i)
     !$omp end ordered
  end do
  !$omp end do
  !$omp do ordered schedule(dynamic, 5)
  do i = n / 2 + 1, n
     work(i) = int(i, 8) * i
     !$omp ordered
     call record(i)
     !$omp end ordered
  end do
  !$omp end do nowait
  !$omp end parallel
  call check('do ordered in a region', .false.)

  total = sum(work)
  call ot_print_i8('work', total)
  call ot_print_int('recorded', len)
  call ot_finish()

contains

  subroutine check(what, half)
    character(len=*), intent(in) :: what
    logical, intent(in) :: half
    integer :: want, k
    character(len=200) :: line
    want = n
    if (half) want = n / 2
    call ot_check_int(what // ': ordered blocks run', len, want)
    do k = 1, min(len, want)
       if (list(k) /= k) then
          write (line, '(a,": ordered block ",i0," was iteration ",i0)') what, k, list(k)
          call ot_error(trim(line))
          return
       end if
    end do
  end subroutine check
end program f_ordered
