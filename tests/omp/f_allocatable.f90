! f_allocatable.f90 - allocatable arrays allocated before and inside
! parallel regions (gfortran's ALLOCATE is malloc: the DSM heap under the
! shim).
!
!  - allocated by the initial thread before a region, filled by the team
!    (static loop), read whole by every thread after a barrier, reallocated
!    larger between regions keeping its contents (move_alloc);
!  - private allocatables allocated, grown by assignment and freed in every
!    thread; firstprivate of an allocated array (a copy per thread);
!  - a shared allocatable allocated in a single, filled by all, read after a
!    barrier, deallocated by another single;
!  - a shared array of a derived type with an allocatable component: each
!    thread allocates its own slot, the next thread reads it after a
!    barrier, the owner frees it after another; 10 rounds.
module f_allocatable_data
  implicit none
  type slot
     integer, allocatable :: v(:)
  end type slot
  type(slot) :: slots(0:63)
  real(8), allocatable :: made_in_single(:)
end module f_allocatable_data

program f_allocatable
  use omp_lib
  use omptest
  use f_allocatable_data
  implicit none
  integer, parameter :: n = 20000
  real(8), allocatable :: before(:), bigger(:), fp(:), mine(:)
  integer :: nt, i, r, me, nxt, bad, k
  real(8) :: total

  call ot_start('f_allocatable')
  nt = ot_team_size()
  call ot_print_int('threads', nt)

  allocate (before(n))
  before = -1
  bad = 0
  !$omp parallel private(i) reduction(+:bad)
  !$omp do schedule(static)
  do i = 1, n
     before(i) = 3d0 * i
  end do
  !$omp end do
  do i = 1, n
     if (before(i) /= 3d0 * i) bad = bad + 1
  end do
  !$omp end parallel
  call ot_check_int('allocated before: wrong after the barrier', bad, 0)

  ! Grow it between regions: move_alloc keeps the memory, the copy the values.
  allocate (bigger(2 * n))
  bigger(1:n) = before
  bigger(n + 1:) = 0
  call move_alloc(bigger, before)
  call ot_check_log('move_alloc left the source allocated', allocated(bigger), .false.)
  total = 0
  !$omp parallel do schedule(dynamic, 500) reduction(+:total)
  do i = 1, 2 * n
     if (i > n) before(i) = 1d0
     total = total + before(i)
  end do
  !$omp end parallel do
  call ot_check_dbl('sum after growing', total, 3d0 * n * (n + 1) / 2 + n)

  ! Private allocatables, and firstprivate of an allocated array.
  allocate (fp(10))
  fp = [(dble(i), i = 1, 10)]
  bad = 0
  !$omp parallel private(mine, me, k) firstprivate(fp) reduction(+:bad)
  me = omp_get_thread_num()
  if (.not. allocated(fp)) then
     bad = bad + 1
  else
     if (any(fp /= [(dble(k), k = 1, 10)])) bad = bad + 1
     fp = fp + me
  end if
  do r = 1, 10
     allocate (mine(100 * r))
     mine = me + r
     ! Grows by assignment (a reallocation).
     mine = [mine, mine]
     if (size(mine) /= 200 * r .or. any(mine /= me + r)) bad = bad + 1
     deallocate (mine)
  end do
  !$omp end parallel
  call ot_check_int('private and firstprivate allocatables wrong', bad, 0)
  call ot_check_dbl('the original of a firstprivate array', sum(fp), 55d0)

  ! Allocated in a single, filled by all, freed by another single.
  bad = 0
  !$omp parallel private(i) reduction(+:bad)
  !$omp single
  allocate (made_in_single(n))
  !$omp end single
  !$omp do schedule(static, 100)
  do i = 1, n
     made_in_single(i) = dble(i) / 4
  end do
  !$omp end do
  do i = omp_get_thread_num() + 1, n, 13
     if (made_in_single(i) /= dble(i) / 4) bad = bad + 1
  end do
  !$omp barrier
  !$omp single
  deallocate (made_in_single)
  !$omp end single
  !$omp end parallel
  call ot_check_int('allocated in a single: wrong values', bad, 0)
  call ot_check_log('deallocated in a single', allocated(made_in_single), .false.)

  ! Each thread's slot, read by the next thread, freed by its owner.
  bad = 0
  !$omp parallel private(me, nxt, r) reduction(+:bad)
  me = omp_get_thread_num()
  nxt = mod(me + 1, omp_get_num_threads())
  do r = 1, 10
     allocate (slots(me)%v(50 + 10 * me + r))
     slots(me)%v = 1000 * me + r
     !$omp barrier
     if (.not. allocated(slots(nxt)%v)) then
        bad = bad + 1
     else if (size(slots(nxt)%v) /= 50 + 10 * nxt + r &
          .or. any(slots(nxt)%v /= 1000 * nxt + r)) then
        bad = bad + 1
     end if
     !$omp barrier
     deallocate (slots(me)%v)
  end do
  !$omp end parallel
  call ot_check_int('slots read by the next thread: wrong', bad, 0)

  call ot_print_dbl('sum after growing', total)
  call ot_print_int('slots allocated', count([(allocated(slots(i)%v), i = 0, 63)]))
  deallocate (before, fp)
  call ot_finish()
end program f_allocatable
