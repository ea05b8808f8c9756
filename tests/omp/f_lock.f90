! f_lock.f90 - Fortran locks: omp_init_lock, omp_set_lock, omp_unset_lock,
! omp_test_lock, omp_destroy_lock on integer(omp_lock_kind), and the
! nestable ones on integer(omp_nest_lock_kind).
!
! A module lock guards non-atomic updates with an "inside" check; an array
! of 8 locks (allocatable, so on the heap) each guards its own counter,
! taken by the threads in different orders; a lock that is a local of the
! main program.  omp_test_lock must fail while thread 0 holds the lock
! (across two barriers) and succeed on a free lock, each thread in turn; a
! loop on omp_test_lock until it succeeds.  A nest lock taken three deep
! by recursion, omp_test_nest_lock returning the new nesting count in the
! owner and 0 in another thread while it is held.
module f_lock_data
  use omp_lib
  implicit none
  integer, parameter :: iters = 60, nlocks = 8
  integer(omp_lock_kind) :: glock
  integer(omp_nest_lock_kind) :: nlock
  integer :: inside = 0
  integer(8) :: gcount = 0, ncount = 0
  integer(8) :: counters(nlocks) = 0
contains
  ! Take the nest lock depth more times, count at the bottom.
  recursive subroutine nest(depth)
    integer, intent(in) :: depth
    call omp_set_nest_lock(nlock)
    if (depth > 1) then
       call nest(depth - 1)
    else
       ncount = ncount + 1
    end if
    call omp_unset_nest_lock(nlock)
  end subroutine nest
end module f_lock_data

program f_lock
  use omp_lib
  use omptest
  use f_lock_data
  implicit none
  integer(omp_lock_kind), allocatable :: locks(:)
  integer(omp_lock_kind) :: slock
  integer :: nt, i, me, k, t, got
  integer(8) :: scount, total
  integer :: tried, failed_while_held, got_when_free, nest_counts_ok, nest_refused

  call ot_start('f_lock')
  nt = ot_team_size()
  call ot_print_int('threads', nt)
  allocate (locks(nlocks))
  call omp_init_lock(glock)
  call omp_init_lock(slock)
  call omp_init_nest_lock(nlock)
  do i = 1, nlocks
     call omp_init_lock(locks(i))
  end do
  scount = 0
  tried = 0
  failed_while_held = 0
  got_when_free = 0
  nest_counts_ok = 0
  nest_refused = 0

  !$omp parallel private(me, k, t, got) &
  !$omp reduction(+:tried, failed_while_held, got_when_free, nest_counts_ok, nest_refused)
  me = omp_get_thread_num()
  do k = 1, iters
     call omp_set_lock(glock)
     inside = inside + 1
     if (inside /= 1) call ot_error('two threads hold the module lock')
     gcount = gcount + me + 1
     inside = inside - 1
     call omp_unset_lock(glock)

     call omp_set_lock(locks(mod(k + me, nlocks) + 1))
     counters(mod(k + me, nlocks) + 1) = counters(mod(k + me, nlocks) + 1) + 1
     call omp_unset_lock(locks(mod(k + me, nlocks) + 1))
  end do
  do k = 1, iters / 3
     call omp_set_lock(slock)
     scount = scount + 1
     call omp_unset_lock(slock)
  end do

  ! omp_test_lock on a lock another thread holds fails ...
  !$omp barrier
  if (me == 0) call omp_set_lock(glock)
  !$omp barrier
  if (me /= 0) then
     tried = tried + 1
     if (.not. omp_test_lock(glock)) then
        failed_while_held = failed_while_held + 1
     else
        call ot_error('omp_test_lock took a lock thread 0 holds')
     end if
  end if
  !$omp barrier
  if (me == 0) call omp_unset_lock(glock)
  !$omp barrier
  ! ... and succeeds on a free lock, one thread at a time.
  do t = 0, omp_get_num_threads() - 1
     if (t == me) then
        if (omp_test_lock(glock)) then
           got_when_free = got_when_free + 1
           call omp_unset_lock(glock)
        else
           call ot_error('omp_test_lock failed on a free lock')
        end if
     end if
     !$omp barrier
  end do
  ! Try until it works.
  do k = 1, 10
     do while (.not. omp_test_lock(glock))
     end do
     gcount = gcount + 1000
     call omp_unset_lock(glock)
  end do

  ! Nest locks: recursion three deep, then omp_test_nest_lock counts.
  do k = 1, 10
     call nest(3)
  end do
  !$omp barrier
  if (me == 0) then
     call omp_set_nest_lock(nlock)
     got = omp_test_nest_lock(nlock)
     if (got == 2) nest_counts_ok = nest_counts_ok + 1
     got = omp_test_nest_lock(nlock)
     if (got == 3) nest_counts_ok = nest_counts_ok + 1
  end if
  !$omp barrier
  if (me /= 0) then
     got = omp_test_nest_lock(nlock)
     if (got == 0) then
        nest_refused = nest_refused + 1
     else
        call ot_error('omp_test_nest_lock took a nest lock thread 0 holds')
        call omp_unset_nest_lock(nlock)
     end if
  end if
  !$omp barrier
  if (me == 0) then
     call omp_unset_nest_lock(nlock)
     call omp_unset_nest_lock(nlock)
     call omp_unset_nest_lock(nlock)
  end if
  !$omp barrier
  got = omp_test_nest_lock(nlock)
  if (got >= 1) then
     ncount = ncount + 100
     call omp_unset_nest_lock(nlock)
  else
     ! Another thread may hold it right now: take it the blocking way.
     call omp_set_nest_lock(nlock)
     ncount = ncount + 100
     call omp_unset_nest_lock(nlock)
  end if
  !$omp end parallel

  total = 0
  do i = 1, nlocks
     total = total + counters(i)
     call omp_destroy_lock(locks(i))
  end do
  call omp_destroy_lock(glock)
  call omp_destroy_lock(slock)
  call omp_destroy_nest_lock(nlock)
  deallocate (locks)

  call ot_check_i8('module lock count', gcount, &
       int(iters, 8) * nt * (nt + 1) / 2 + 10000_8 * nt)
  call ot_check_i8('lock array total', total, int(iters, 8) * nt)
  call ot_check_i8('local lock count', scount, int(iters / 3, 8) * nt)
  call ot_check_int('omp_test_lock tries while held', tried, nt - 1)
  call ot_check_int('omp_test_lock failures while held', failed_while_held, nt - 1)
  call ot_check_int('omp_test_lock successes when free', got_when_free, nt)
  call ot_check_i8('nest lock count', ncount, 110_8 * nt)
  call ot_check_int('omp_test_nest_lock nesting counts 2 and 3', nest_counts_ok, 2)
  call ot_check_int('omp_test_nest_lock refusals while held', nest_refused, nt - 1)

  call ot_print_i8('module', gcount)
  call ot_print_i8('array', total)
  call ot_print_i8('local', scount)
  call ot_print_int('test_lock failed while held', failed_while_held)
  call ot_print_int('test_lock succeeded when free', got_when_free)
  call ot_print_i8('nest', ncount)
  call ot_print_int('test_nest_lock refused', nest_refused)
  call ot_finish()
end program f_lock
