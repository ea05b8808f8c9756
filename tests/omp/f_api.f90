! f_api.f90 - the OpenMP runtime routines through "use omp_lib".
!
! omp_get_thread_num (0..n-1, each once), omp_get_num_threads (the same in
! every thread, 1 outside), omp_get_max_threads, omp_in_parallel (false
! outside and in a team of one, true in a team), omp_get_level and
! omp_get_active_level, omp_get_ancestor_thread_num, omp_get_team_size;
! omp_set_num_threads(k) for k = 1..n gives the next region k threads,
! and set inside a region changes only that thread's value;
! omp_get_wtime never goes back and measures a busy wait of 20 ms,
! omp_get_wtick is in (0, 1); omp_set_schedule / omp_get_schedule for each
! kind, outside and inside a region.  These are the Fortran entry points
! (omp_get_thread_num_, ...), which take their arguments by reference.
module f_api_data
  use omptest
  implicit none
  integer :: seen(0:ot_max_threads - 1) = 0
  integer :: nums(0:ot_max_threads - 1) = -1
  integer :: maxes(0:ot_max_threads - 1) = -1
  logical :: inpar(0:ot_max_threads - 1) = .false.
  integer :: levels(0:ot_max_threads - 1) = -1, active(0:ot_max_threads - 1) = -1
  integer :: ancestor(0:ot_max_threads - 1) = -1, tsize(0:ot_max_threads - 1) = -1
  integer :: team_seen = 0
  integer :: set_inside(0:ot_max_threads - 1) = -1
  integer :: wtime_bad = 0
end module f_api_data

program f_api
  use omp_lib
  use omptest
  use f_api_data
  implicit none
  integer :: nt, t, k, chunk, got_chunk, r
  integer(kind=omp_sched_kind) :: kind
  integer(kind=omp_sched_kind), parameter :: kinds(3) = &
       [omp_sched_static, omp_sched_dynamic, omp_sched_guided]
  real(8) :: t0, t1, tick
  logical :: serial_in_parallel

  call ot_start('f_api')
  nt = ot_team_size()
  call ot_print_int('threads', nt)

  call ot_check_int('omp_get_thread_num outside', omp_get_thread_num(), 0)
  call ot_check_int('omp_get_num_threads outside', omp_get_num_threads(), 1)
  call ot_check_log('omp_in_parallel outside', omp_in_parallel(), .false.)
  call ot_check_int('omp_get_level outside', omp_get_level(), 0)
  call ot_check_int('omp_get_active_level outside', omp_get_active_level(), 0)

  !$omp parallel private(t)
  t = omp_get_thread_num()
  if (t >= 0 .and. t < ot_max_threads) then
     seen(t) = seen(t) + 1
     nums(t) = omp_get_num_threads()
     maxes(t) = omp_get_max_threads()
     inpar(t) = omp_in_parallel()
     levels(t) = omp_get_level()
     active(t) = omp_get_active_level()
     ancestor(t) = omp_get_ancestor_thread_num(1) - t + omp_get_ancestor_thread_num(0)
     tsize(t) = omp_get_team_size(1)
  else
     call ot_error('omp_get_thread_num out of range')
  end if
  !$omp end parallel
  do t = 0, nt - 1
     call ot_check_int('thread number seen', seen(t), 1)
     call ot_check_int('omp_get_num_threads in the team', nums(t), nt)
     call ot_check_int('omp_get_max_threads in the team', maxes(t), nt)
     call ot_check_log('omp_in_parallel in the team', inpar(t), nt > 1)
     call ot_check_int('omp_get_level in the team', levels(t), 1)
     call ot_check_int('omp_get_active_level in the team', active(t), merge(1, 0, nt > 1))
     call ot_check_int('omp_get_ancestor_thread_num(1) - me + (0)', ancestor(t), 0)
     call ot_check_int('omp_get_team_size(1)', tsize(t), nt)
  end do
  call ot_check_int('thread numbers seen in all', count(seen(0:nt - 1) == 1), nt)

  ! A team of one is inactive.
  !$omp parallel num_threads(1)
  serial_in_parallel = omp_in_parallel()
  !$omp end parallel
  call ot_check_log('omp_in_parallel in a team of one', serial_in_parallel, .false.)

  ! omp_set_num_threads(k): the next region has k threads.
  do k = 1, nt
     call omp_set_num_threads(k)
     call ot_check_int('omp_get_max_threads after omp_set_num_threads', &
          omp_get_max_threads(), k)
     team_seen = 0
     !$omp parallel
     !$omp atomic
     team_seen = team_seen + 1
     !$omp end parallel
     call ot_check_int('team size after omp_set_num_threads', team_seen, k)
  end do
  call omp_set_num_threads(nt)

  ! Set inside a region: that thread's value only.
  !$omp parallel private(t)
  t = omp_get_thread_num()
  call omp_set_num_threads(t + 1)
  !$omp barrier
  set_inside(t) = omp_get_max_threads()
  !$omp end parallel
  do t = 0, nt - 1
     call ot_check_int('omp_set_num_threads inside a region', set_inside(t), t + 1)
  end do
  call ot_check_int('omp_get_max_threads after the region', omp_get_max_threads(), nt)

  ! Wall clock: monotonic in every thread; 20 ms of busy waiting.
  tick = omp_get_wtick()
  call ot_check(tick > 0 .and. tick < 1, 'omp_get_wtick outside (0, 1)')
  !$omp parallel private(t0, t1, k) reduction(+:wtime_bad)
  t0 = omp_get_wtime()
  do k = 1, 1000
     t1 = omp_get_wtime()
     if (t1 < t0) wtime_bad = wtime_bad + 1
     t0 = t1
  end do
  !$omp end parallel
  call ot_check_int('omp_get_wtime going back', wtime_bad, 0)
  t0 = omp_get_wtime()
  t1 = t0
  do while (t1 - t0 < 0.02d0)
     t1 = omp_get_wtime()
  end do
  call ot_check(t1 - t0 >= 0.02d0 .and. t1 - t0 < 5d0, 'omp_get_wtime: 20 ms busy wait')

  ! Schedules, set and read back outside and inside a region.
  do r = 1, 3
     chunk = 2 * r + 1
     call omp_set_schedule(kinds(r), chunk)
     call omp_get_schedule(kind, got_chunk)
     ! Bit 31 is the monotonic modifier, which gfortran 12's omp_lib
     ! does not name.
     call ot_check(ibclr(kind, 31) == kinds(r), 'omp_get_schedule: another kind')
     call ot_check_int('omp_get_schedule chunk', got_chunk, chunk)
     !$omp parallel private(kind, got_chunk)
     call omp_get_schedule(kind, got_chunk)
     if (ibclr(kind, 31) /= kinds(r) .or. got_chunk /= chunk) &
          call ot_error('omp_get_schedule inside a region: not what was set before')
     !$omp end parallel
  end do

  call ot_print_int('thread numbers seen', count(seen(0:nt - 1) == 1))
  call ot_print_int('num threads', nums(0))
  call ot_print_int('max threads', maxes(0))
  call ot_print_log('in parallel', inpar(0))
  call ot_print_int('level', levels(0))
  call ot_print_int('active level', active(0))
  call ot_print_int('team size', tsize(0))
  call ot_finish()
end program f_api
