! f_task.f90 - Fortran tasks: recursion with taskwait, depend, taskloop,
! taskgroup, firstprivate arrays.
!
!  - a recursive Fibonacci function with a task per call above a cut-off
!    and a taskwait before the sum (the children write the caller's
!    locals, shared), from a single and from every thread;
!  - a chain of 30 tasks with depend(out), depend(in), depend(inout) on
!    one variable in turn, each appending its number to a list: in order;
!    a writer, 8 readers of its value, a second writer that finds them
!    all done;
!  - taskloop with grainsize(10), num_tasks(4), a downward stride of 3,
!    and nogroup followed by taskwait: each iteration once;
!  - a taskgroup around tasks that make children and grandchildren
!    without waiting: all done at its end;
!  - firstprivate of a fixed-size array and of an allocatable array (a
!    copy of the data, which gfortran makes in the task's copy function)
!    in 10 tasks, the creator changing both right after each task: every
!    task sees the values of its round.
module f_task_data
  implicit none
  integer, parameter :: chain_len = 30, readers = 8, n = 500
  integer, parameter :: rounds = 10, tg_top = 5, tg_mid = 4
  integer :: chain_log(chain_len), chain_pos = 0, tok = 0
  integer :: rw_x = 0, seen(readers) = 0, readers_done = 0, writer_saw = -1
  integer :: hits(n) = 0
  integer :: tg_leaves(tg_mid, tg_top) = 0
  logical :: round_ok(rounds) = .false.
  integer(8) :: team_fib(0:63) = -1

contains

  recursive function fib(k) result(r)
    integer, intent(in) :: k
    integer(8) :: r, x, y
    if (k < 2) then
       r = k
    else if (k < 12) then
       r = fib(k - 1) + fib(k - 2)
    else
       !$omp task shared(x) firstprivate(k)
       x = fib(k - 1)
       !$omp end task
       !$omp task shared(y) firstprivate(k)
       y = fib(k - 2)
       !$omp end task
       !$omp taskwait
       r = x + y
    end if
  end function fib

  integer(8) function fib_iter(k)
    integer, intent(in) :: k
    integer(8) :: a, b, t
    integer :: i
    a = 0
    b = 1
    do i = 1, k
       t = a + b
       a = b
       b = t
    end do
    fib_iter = a
  end function fib_iter

  subroutine append(j)
    integer, intent(in) :: j
    chain_pos = chain_pos + 1
    chain_log(chain_pos) = j
  end subroutine append

end module f_task_data

program f_task
  use omp_lib
  use omptest
  use f_task_data
  implicit none
  integer :: nt, i, j, t, r, m, bad
  integer(8) :: f20
  integer :: fixed(40)
  integer, allocatable :: alloc(:)

  call ot_start('f_task')
  nt = ot_team_size()
  call ot_print_int('threads', nt)

  ! Recursion with taskwait.
  f20 = -1
  !$omp parallel
  !$omp single
  f20 = fib(20)
  !$omp end single
  !$omp end parallel
  call ot_check_i8('fib(20) with tasks', f20, fib_iter(20))
  call ot_print_i8('fib(20)', f20)

  !$omp parallel
  team_fib(omp_get_thread_num()) = fib(14 + mod(omp_get_thread_num(), 4))
  !$omp end parallel
  do t = 0, nt - 1
     call ot_check_i8('a thread''s fib with tasks', team_fib(t), fib_iter(14 + mod(t, 4)))
  end do
  call ot_print_i8('every thread its own fib: sum', sum(team_fib(0:nt - 1)))

  ! Dependences.
  !$omp parallel
  !$omp single
  do j = 1, chain_len
     select case (mod(j, 3))
     case (1)
        !$omp task depend(out: tok) firstprivate(j)
        call append(j)
        !$omp end task
     case (2)
        !$omp task depend(in: tok) firstprivate(j)
        call append(j)
        !$omp end task
     case default
        !$omp task depend(inout: tok) firstprivate(j)
        call append(j)
        !$omp end task
     end select
  end do

  !$omp task depend(out: rw_x)
  rw_x = 7
  !$omp end task
  do j = 1, readers
     !$omp task depend(in: rw_x) firstprivate(j)
     seen(j) = rw_x
     !$omp atomic
     readers_done = readers_done + 1
     !$omp end task
  end do
  !$omp task depend(out: rw_x)
  !$omp atomic read
  writer_saw = readers_done
  rw_x = 8
  !$omp end task
  !$omp taskwait
  !$omp end single
  !$omp end parallel
  call ot_check_int('chain: tasks appended', chain_pos, chain_len)
  bad = 0
  do j = 1, min(chain_pos, chain_len)
     if (chain_log(j) /= j) bad = bad + 1
  end do
  call ot_check_int('chain: entries out of order', bad, 0)
  call ot_check_int('readers that missed the first writer', count(seen /= 7), 0)
  call ot_check_int('readers done when the second writer ran', writer_saw, readers)
  call ot_check_int('the second writer''s value', rw_x, 8)
  call ot_print_int('depend chain in order, tasks', chain_len)

  ! taskloop.
  !$omp parallel
  !$omp single
  !$omp taskloop grainsize(10)
  do i = 1, n
     hits(i) = hits(i) + 1
  end do
  !$omp end taskloop
  !$omp taskloop num_tasks(4)
  do i = 1, n
     hits(i) = hits(i) + 10
  end do
  !$omp end taskloop
  !$omp taskloop grainsize(7)
  do i = n, 1, -3
     hits(i) = hits(i) + 100
  end do
  !$omp end taskloop
  !$omp taskloop nogroup
  do i = 1, n
     hits(i) = hits(i) + 1000
  end do
  !$omp end taskloop
  !$omp taskwait
  !$omp end single
  !$omp end parallel
  bad = 0
  do i = 1, n
     m = 1011
     if (mod(n - i, 3) == 0) m = m + 100
     if (hits(i) /= m) bad = bad + 1
  end do
  call ot_check_int('taskloop: iterations not run exactly once', bad, 0)
  call ot_print_int('taskloop: sum of counts', sum(hits))

  ! taskgroup: children and grandchildren, nobody waiting.
  !$omp parallel
  !$omp single
  !$omp taskgroup
  do t = 1, tg_top
     !$omp task firstprivate(t) private(m)
     do m = 1, tg_mid
        !$omp task firstprivate(t, m)
        !$omp atomic
        tg_leaves(m, t) = tg_leaves(m, t) + 1
        !$omp end task
     end do
     !$omp end task
  end do
  !$omp end taskgroup
  bad = count(tg_leaves /= 1)
  !$omp end single
  !$omp end parallel
  call ot_check_int('taskgroup: grandchildren not done at its end', bad, 0)
  call ot_print_int('taskgroup: grandchildren', sum(tg_leaves))

  ! firstprivate arrays: copies at creation.
  allocate (alloc(25))
  !$omp parallel
  !$omp single
  do r = 1, rounds
     fixed = [(r * 100 + i, i = 1, 40)]
     alloc = [(r * 1000 + i, i = 1, 25)]
     !$omp task firstprivate(fixed, alloc, r) private(i)
     round_ok(r) = allocated(alloc)
     if (round_ok(r)) then
        round_ok(r) = size(alloc) == 25
     end if
     if (round_ok(r)) then
        do i = 1, 40
           if (fixed(i) /= r * 100 + i) round_ok(r) = .false.
        end do
        do i = 1, 25
           if (alloc(i) /= r * 1000 + i) round_ok(r) = .false.
        end do
     end if
     ! The copies are the task's own.
     fixed = 0
     alloc = 0
     !$omp end task
     fixed = -1
     alloc = -1
  end do
  !$omp taskwait
  !$omp end single
  !$omp end parallel
  call ot_check_int('tasks whose firstprivate arrays were not the values at creation', &
       count(.not. round_ok), 0)
  call ot_check_log('the creator''s allocatable changed by a task', all(alloc == -1), .true.)
  call ot_print_int('firstprivate arrays: rounds', rounds)

  call ot_finish()
end program f_task
