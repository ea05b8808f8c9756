! f_atomic.f90 - Fortran "atomic": update, read, write, capture.
!
! Every update form on shared variables, from every thread at once:
! x = x + e, x = e + x, x = x - e, x = x * e, x = x / e on integer,
! integer(8) and real(8); x = x .and. e, .or., .eqv., .neqv. on logical;
! x = max(x, e), min, iand, ior, ieor.  The variables live in a module,
! in a COMMON block and in the main program, and one is an element of an
! array.  Then atomic write and read (every value read is one a thread
! wrote), and capture in both orders: tickets taken by every thread are
! each taken exactly once.  ITERS updates per thread and form.
module f_atomic_data
  implicit none
  integer, parameter :: iters = 100
  integer :: isum = 0, isum2 = 0, isub = 0
  integer(8) :: lmul = 1, lmax = -1, lmin = 1000000, lior = 0, liand = -1, lieor = 0
  real(8) :: rsum = 0, rdiv = 1024
  logical :: land = .true., lor = .false., leqv = .true., lneqv = .false.
  integer :: arr(4) = 0
  integer :: counter = 0, counter2 = 0
  integer :: taken(64 * iters) = 0, taken2(64 * iters) = 0
  integer :: shared_value = -1
end module f_atomic_data

program f_atomic
  use omp_lib
  use omptest
  use f_atomic_data
  implicit none
  integer :: nt, k, t, bad_reads
  integer(8) :: csum, want_ieor
  common /f_atomic_common/ csum

  call ot_start('f_atomic')
  nt = ot_team_size()
  call ot_print_int('threads', nt)
  csum = 0
  bad_reads = 0

  !$omp parallel private(k, t)
  t = omp_get_thread_num()
  do k = 1, iters
     !$omp atomic
     isum = isum + 1
     !$omp atomic
     isum2 = 2 + isum2
     !$omp atomic update
     isub = isub - 3
     !$omp atomic
     rsum = rsum + 0.5d0
     !$omp atomic
     csum = csum + k
     !$omp atomic
     arr(mod(k, 4) + 1) = arr(mod(k, 4) + 1) + 1
     !$omp atomic
     lmax = max(lmax, int(t, 8) * 1000 + k)
     !$omp atomic
     lmin = min(lmin, int(t, 8) * 1000 + k)
     !$omp atomic
     lieor = ieor(lieor, int(k, 8))
     !$omp atomic
     land = land .and. (k /= 50 .or. t /= nt - 1)
     !$omp atomic
     lor = lor .or. (k == 50 .and. t == nt - 1)
     !$omp atomic
     leqv = leqv .eqv. .false.
     !$omp atomic
     lneqv = lneqv .neqv. (k == 1)
  end do
  ! Once per thread: the results stay exact.
  !$omp atomic
  lmul = lmul * 2
  !$omp atomic
  rdiv = rdiv / 2
  !$omp atomic
  lior = ior(lior, ishft(1_8, t))
  !$omp atomic
  liand = iand(liand, not(ishft(1_8, t)))
  !$omp end parallel

  call ot_check_int('x = x + 1', isum, iters * nt)
  call ot_check_int('x = 2 + x', isum2, 2 * iters * nt)
  call ot_check_int('x = x - 3', isub, -3 * iters * nt)
  call ot_check_dbl('real x = x + 0.5', rsum, 0.5d0 * iters * nt)
  call ot_check_i8('COMMON x = x + k', csum, int(iters, 8) * (iters + 1) / 2 * nt)
  do k = 1, 4
     call ot_check_int('array element x = x + 1', arr(k), iters / 4 * nt)
  end do
  call ot_check_i8('max', lmax, int(nt - 1, 8) * 1000 + iters)
  call ot_check_i8('min', lmin, 1_8)
  want_ieor = 0
  do k = 1, iters
     want_ieor = ieor(want_ieor, int(k, 8))
  end do
  if (mod(nt, 2) == 0) want_ieor = 0
  call ot_check_i8('ieor', lieor, want_ieor)
  call ot_check_log('.and.', land, .false.)
  call ot_check_log('.or.', lor, .true.)
  call ot_check_log('.eqv. .false., iters*nt times', leqv, mod(iters * nt, 2) == 0)
  call ot_check_log('.neqv. once per thread', lneqv, mod(nt, 2) == 1)
  call ot_check_i8('x = x * 2 once per thread', lmul, 2_8**nt)
  call ot_check_dbl('x = x / 2 once per thread', rdiv, 1024d0 / 2d0**nt)
  call ot_check_i8('ior of thread bits', lior, 2_8**nt - 1)
  call ot_check_i8('iand of thread bits', liand, not(2_8**nt - 1))

  ! Write and read: a thread reads either the initial value or a value some
  ! thread wrote, never anything else.
  !$omp parallel private(k, t) reduction(+:bad_reads)
  t = omp_get_thread_num()
  do k = 1, iters
     !$omp atomic write
     shared_value = 1000 * (t + 1) + k
     !$omp atomic read
     t = shared_value
     if (t < 1001 .or. t > 1000 * nt + iters .or. mod(t, 1000) < 1 &
          .or. mod(t, 1000) > iters) bad_reads = bad_reads + 1
     t = omp_get_thread_num()
  end do
  !$omp end parallel
  call ot_check_int('atomic reads of a value nobody wrote', bad_reads, 0)

  ! Capture: v = x then x = x + 1, and x = x + 1 then v = x.
  !$omp parallel private(k, t)
  do k = 1, iters
     !$omp atomic capture
     t = counter
     counter = counter + 1
     !$omp end atomic
     if (t >= 0 .and. t < size(taken)) taken(t + 1) = taken(t + 1) + 1
     !$omp atomic capture
     counter2 = counter2 + 1
     t = counter2
     !$omp end atomic
     if (t >= 1 .and. t <= size(taken2)) taken2(t) = taken2(t) + 1
  end do
  !$omp end parallel
  call ot_check_int('capture (v = x; x = x + 1) final value', counter, iters * nt)
  call ot_check_int('capture (x = x + 1; v = x) final value', counter2, iters * nt)
  call ot_check_int('tickets taken other than once (v = x first)', &
       count(taken(1:iters * nt) /= 1), 0)
  call ot_check_int('tickets taken other than once (x = x + 1 first)', &
       count(taken2(1:iters * nt) /= 1), 0)

  call ot_print_int('sum', isum)
  call ot_print_int('sum2', isum2)
  call ot_print_int('sub', isub)
  call ot_print_dbl('real sum', rsum)
  call ot_print_i8('common sum', csum)
  call ot_print_i8('max', lmax)
  call ot_print_i8('min', lmin)
  call ot_print_i8('ieor', lieor)
  call ot_print_i8('mul', lmul)
  call ot_print_dbl('div', rdiv)
  call ot_print_i8('ior', lior)
  call ot_print_i8('iand', liand)
  call ot_print_log('and', land)
  call ot_print_log('or', lor)
  call ot_print_log('eqv', leqv)
  call ot_print_log('neqv', lneqv)
  call ot_print_int('tickets', counter)
  call ot_finish()
end program f_atomic
