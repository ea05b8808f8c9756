! f_parallel_do.f90 - Fortran "parallel do" and "do" with every schedule.
!
! A loop of 3000 iterations records which thread ran each iteration, then
! checks what the schedule promises: every iteration once, in a thread of
! the team; schedule(static): one contiguous block per thread;
! static, 7: chunk j in thread mod(j, nthreads); dynamic, 5: chunks whole;
! guided, 4: no run of iterations in one thread shorter than 4 but the
! last; schedule(runtime) after omp_set_schedule of each kind, read back
! with omp_get_schedule; no schedule clause.  Also a downward loop with a
! stride (static, 2 on the logical iterations), an integer(8) index above
! 2**40 (dynamic), "do" inside a parallel region with nowait and a
! barrier, lastprivate of a variable set in the last iteration, and a sum
! reduction over an array filled by the loop.
module f_parallel_do_rec
  use omp_lib
  use omptest
  implicit none
  integer, parameter :: n = 3000
  integer :: hits(n), owner(n)
contains
  subroutine reset()
    hits = 0
    owner = -1
  end subroutine reset

  ! Logical iteration k (1-based) ran in the calling thread.
  subroutine hit(k)
    integer, intent(in) :: k
    if (k < 1 .or. k > n) then
       call ot_error('logical iteration outside 1..n')
       return
    end if
    hits(k) = hits(k) + 1
    owner(k) = omp_get_thread_num()
  end subroutine hit

  ! Every one of count iterations ran once, in a thread of the team.
  subroutine check_once(what, count, nt)
    character(len=*), intent(in) :: what
    integer, intent(in) :: count, nt
    integer :: k, bad
    character(len=200) :: line
    bad = 0
    do k = 1, count
       if (hits(k) /= 1 .or. owner(k) < 0 .or. owner(k) >= nt) then
          if (bad < 3) then
             write (line, '(a,": iteration ",i0," ran ",i0, &
                  &" times, last in thread ",i0)') what, k, hits(k), owner(k)
             call ot_error(trim(line))
          end if
          bad = bad + 1
       end if
    end do
    if (any(hits(count + 1:) /= 0)) call ot_error(what // ': an iteration past the end ran')
  end subroutine check_once

  ! schedule(static): at most one contiguous block per thread.
  subroutine check_blocks(what, count)
    character(len=*), intent(in) :: what
    integer, intent(in) :: count
    logical :: seen(0:ot_max_threads - 1)
    integer :: k, t
    seen = .false.
    do k = 1, count
       t = owner(k)
       if (t < 0 .or. t >= ot_max_threads) return
       if (k == 1 .or. owner(max(k - 1, 1)) /= t) then
          if (seen(t)) then
             call ot_error(what // ': a thread got a second block')
             return
          end if
          seen(t) = .true.
       end if
    end do
  end subroutine check_blocks

  ! schedule(static, chunk): chunk j (0-based) in thread mod(j, nt).
  subroutine check_round_robin(what, count, chunk, nt)
    character(len=*), intent(in) :: what
    integer, intent(in) :: count, chunk, nt
    integer :: k
    character(len=200) :: line
    do k = 1, count
       if (owner(k) /= mod((k - 1) / chunk, nt)) then
          write (line, '(a,": iteration ",i0," in thread ",i0,", expected ",i0)') &
               what, k, owner(k), mod((k - 1) / chunk, nt)
          call ot_error(trim(line))
          return
       end if
    end do
  end subroutine check_round_robin

  ! Chunks of a fixed size stay whole in one thread.
  subroutine check_chunks(what, count, chunk)
    character(len=*), intent(in) :: what
    integer, intent(in) :: count, chunk
    integer :: k
    do k = 2, count
       if (mod(k - 1, chunk) /= 0 .and. owner(k) /= owner(k - 1)) then
          call ot_error(what // ': a chunk was split between threads')
          return
       end if
    end do
  end subroutine check_chunks

  ! guided with a minimum chunk: runs of at least min_chunk but the last.
  subroutine check_min_runs(what, count, min_chunk)
    character(len=*), intent(in) :: what
    integer, intent(in) :: count, min_chunk
    integer :: k, start
    character(len=200) :: line
    start = 1
    do k = 2, count + 1
       if (k == count + 1) exit
       if (owner(k) /= owner(k - 1)) then
          if (k - start < min_chunk) then
             write (line, '(a,": iterations ",i0,"..",i0," in one thread, fewer than ",i0)') &
                  what, start, k - 1, min_chunk
             call ot_error(trim(line))
             return
          end if
          start = k
       end if
    end do
  end subroutine check_min_runs
end module f_parallel_do_rec

program f_parallel_do
  use omp_lib
  use omptest
  use f_parallel_do_rec
  implicit none
  integer :: nt, i, last, kind_chunk
  integer(kind=omp_sched_kind) :: kind
  integer(8) :: i8, base8
  real(8) :: x(n), total
  integer(kind=omp_sched_kind), parameter :: kinds(3) = &
       [omp_sched_static, omp_sched_dynamic, omp_sched_guided]
  integer, parameter :: chunks(3) = [5, 3, 6]
  character(len=8), parameter :: names(3) = ['static  ', 'dynamic ', 'guided  ']
  integer :: r

  call ot_start('f_parallel_do')
  nt = ot_team_size()
  call ot_print_int('threads', nt)

  call reset()
  !$omp parallel do schedule(static)
  do i = 1, n
     call hit(i)
     x(i) = 2.0d0 * i
  end do
  !$omp end parallel do
  call check_once('static', n, nt)
  call check_blocks('static', n)

  call reset()
  last = -1
  !$omp parallel do schedule(static, 7) lastprivate(last)
  do i = 1, n
     call hit(i)
     last = i
  end do
  !$omp end parallel do
  call check_once('static,7', n, nt)
  call check_round_robin('static,7', n, 7, nt)
  call ot_check_int('lastprivate of static,7', last, n)

  call reset()
  !$omp parallel do schedule(dynamic)
  do i = 1, n
     call hit(i)
  end do
  !$omp end parallel do
  call check_once('dynamic', n, nt)

  call reset()
  !$omp parallel do schedule(dynamic, 5)
  do i = 1, n
     call hit(i)
  end do
  !$omp end parallel do
  call check_once('dynamic,5', n, nt)
  call check_chunks('dynamic,5', n, 5)

  call reset()
  !$omp parallel do schedule(guided)
  do i = 1, n
     call hit(i)
  end do
  !$omp end parallel do
  call check_once('guided', n, nt)

  call reset()
  !$omp parallel do schedule(guided, 4)
  do i = 1, n
     call hit(i)
  end do
  !$omp end parallel do
  call check_once('guided,4', n, nt)
  call check_min_runs('guided,4', n, 4)

  ! schedule(runtime): each kind set with omp_set_schedule, read back.
  do r = 1, 3
     call omp_set_schedule(kinds(r), chunks(r))
     call omp_get_schedule(kind, kind_chunk)
     ! Bit 31 is the monotonic modifier (omp_sched_monotonic, which
     ! gfortran 12's omp_lib does not name).
     call ot_check(ibclr(kind, 31) == kinds(r), &
          'omp_get_schedule: not the kind omp_set_schedule set: ' // names(r))
     call ot_check_int('omp_get_schedule chunk of ' // trim(names(r)), kind_chunk, chunks(r))
     call reset()
     !$omp parallel do schedule(runtime)
     do i = 1, n
        call hit(i)
     end do
     !$omp end parallel do
     call check_once('runtime ' // trim(names(r)), n, nt)
     select case (r)
     case (1)
        call check_round_robin('runtime static,5', n, 5, nt)
     case (2)
        call check_chunks('runtime dynamic,3', n, 3)
     case (3)
        call check_min_runs('runtime guided,6', n, 6)
     end select
  end do
  call omp_set_schedule(omp_sched_static, 0)
  call reset()
  !$omp parallel do schedule(runtime)
  do i = 1, n
     call hit(i)
  end do
  !$omp end parallel do
  call check_once('runtime static', n, nt)
  call check_blocks('runtime static', n)

  ! No schedule clause.
  call reset()
  !$omp parallel do
  do i = 1, n
     call hit(i)
  end do
  !$omp end parallel do
  call check_once('no schedule', n, nt)

  ! Downward with a stride: i = n, n-3, ..., logical iteration (n-i)/3+1.
  call reset()
  !$omp parallel do schedule(static, 2)
  do i = n, 1, -3
     call hit((n - i) / 3 + 1)
  end do
  !$omp end parallel do
  call check_once('downward static,2', n / 3, nt)
  call check_round_robin('downward static,2', n / 3, 2, nt)

  ! An integer(8) index above 2**40.
  base8 = 2_8**40
  call reset()
  !$omp parallel do schedule(dynamic, 11)
  do i8 = base8, base8 + n - 1
     call hit(int(i8 - base8) + 1)
  end do
  !$omp end parallel do
  call check_once('integer(8) dynamic,11', n, nt)
  call check_chunks('integer(8) dynamic,11', n, 11)

  ! "do" in a region: nowait then a barrier, then a reduction over x.
  call reset()
  total = 0
  !$omp parallel
  !$omp do schedule(static, 13)
  do i = 1, n
     call hit(i)
  end do
  !$omp end do nowait
  !$omp barrier
  !$omp do schedule(guided, 2) reduction(+:total)
  do i = 1, n
     total = total + x(i)
  end do
  !$omp end do
  !$omp end parallel
  call check_once('do nowait static,13', n, nt)
  call check_round_robin('do nowait static,13', n, 13, nt)
  call ot_check_dbl('sum of x', total, dble(n) * (n + 1))

  call ot_print_dbl('sum of x', total)
  call ot_print_int('last', last)
  call ot_finish()
end program f_parallel_do
