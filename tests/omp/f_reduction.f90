! f_reduction.f90 - Fortran reductions with every operator.
!
! + * - max min iand ior ieor on integer(8), .and. .or. .eqv. .neqv. on
! logical, + * - max min on real(8), each from an initial value that is not
! the operator's identity, in a "parallel do" with schedule(static) and in
! a "do" with schedule(dynamic, 50) inside a region, against the
! sequential loop.  The values are chosen so that every order of
! combination computes the same result exactly (integers, multiples of
! powers of two, products of 1, 2 and -1).  Then an array reduction
! (reduction(+:a) on an array of 8) and two variables on one clause.
program f_reduction
  use omp_lib
  use omptest
  implicit none
  integer, parameter :: n = 1000
  integer :: nt, i
  integer(8) :: ia, ib, ir
  logical :: la, lb, lr
  real(8) :: ra, rb, rr
  integer(8) :: arr(8), arr_ref(8), s1, s2

  call ot_start('f_reduction')
  nt = ot_team_size()
  call ot_print_int('threads', nt)

  ! integer +
  ia = 100_8
  ib = 100_8
  ir = 100_8
  !$omp parallel do schedule(static) reduction(+:ia)
  do i = 1, n
     ia = ia + int(i, 8) * i
  end do
  !$omp end parallel do
  !$omp parallel
  !$omp do schedule(dynamic, 50) reduction(+:ib)
  do i = 1, n
     ib = ib + int(i, 8) * i
  end do
  !$omp end do
  !$omp end parallel
  do i = 1, n
     ir = ir + int(i, 8) * i
  end do
  call ot_check_i8('reduction(+) integer + in a parallel do', ia, ir)
  call ot_check_i8('reduction(+) integer + in a do', ib, ir)
  call ot_print_i8('reduction(integer +)', ia)

  ! integer -
  ia = -7_8
  ib = -7_8
  ir = -7_8
  !$omp parallel do schedule(static) reduction(-:ia)
  do i = 1, n
     ia = ia - int(i, 8)
  end do
  !$omp end parallel do
  !$omp parallel
  !$omp do schedule(dynamic, 50) reduction(-:ib)
  do i = 1, n
     ib = ib - int(i, 8)
  end do
  !$omp end do
  !$omp end parallel
  do i = 1, n
     ir = ir - int(i, 8)
  end do
  call ot_check_i8('reduction(-) integer - in a parallel do', ia, ir)
  call ot_check_i8('reduction(-) integer - in a do', ib, ir)
  call ot_print_i8('reduction(integer -)', ia)

  ! integer *
  ia = 3_8
  ib = 3_8
  ir = 3_8
  !$omp parallel do schedule(static) reduction(*:ia)
  do i = 1, n
     ia = ia * fac(i)
  end do
  !$omp end parallel do
  !$omp parallel
  !$omp do schedule(dynamic, 50) reduction(*:ib)
  do i = 1, n
     ib = ib * fac(i)
  end do
  !$omp end do
  !$omp end parallel
  do i = 1, n
     ir = ir * fac(i)
  end do
  call ot_check_i8('reduction(*) integer * in a parallel do', ia, ir)
  call ot_check_i8('reduction(*) integer * in a do', ib, ir)
  call ot_print_i8('reduction(integer *)', ia)

  ! integer max
  ia = -5_8
  ib = -5_8
  ir = -5_8
  !$omp parallel do schedule(static) reduction(max:ia)
  do i = 1, n
     ia = max(ia, int(mod(i * 37, 1001), 8))
  end do
  !$omp end parallel do
  !$omp parallel
  !$omp do schedule(dynamic, 50) reduction(max:ib)
  do i = 1, n
     ib = max(ib, int(mod(i * 37, 1001), 8))
  end do
  !$omp end do
  !$omp end parallel
  do i = 1, n
     ir = max(ir, int(mod(i * 37, 1001), 8))
  end do
  call ot_check_i8('reduction(max) integer max in a parallel do', ia, ir)
  call ot_check_i8('reduction(max) integer max in a do', ib, ir)
  call ot_print_i8('reduction(integer max)', ia)

  ! integer min
  ia = 999_8
  ib = 999_8
  ir = 999_8
  !$omp parallel do schedule(static) reduction(min:ia)
  do i = 1, n
     ia = min(ia, int(mod(i * 37, 1001), 8) + 3)
  end do
  !$omp end parallel do
  !$omp parallel
  !$omp do schedule(dynamic, 50) reduction(min:ib)
  do i = 1, n
     ib = min(ib, int(mod(i * 37, 1001), 8) + 3)
  end do
  !$omp end do
  !$omp end parallel
  do i = 1, n
     ir = min(ir, int(mod(i * 37, 1001), 8) + 3)
  end do
  call ot_check_i8('reduction(min) integer min in a parallel do', ia, ir)
  call ot_check_i8('reduction(min) integer min in a do', ib, ir)
  call ot_print_i8('reduction(integer min)', ia)

  ! iand
  ia = not(0_8)
  ib = not(0_8)
  ir = not(0_8)
  !$omp parallel do schedule(static) reduction(iand:ia)
  do i = 1, n
     ia = iand(ia, not(ishft(1_8, mod(i, 40))))
  end do
  !$omp end parallel do
  !$omp parallel
  !$omp do schedule(dynamic, 50) reduction(iand:ib)
  do i = 1, n
     ib = iand(ib, not(ishft(1_8, mod(i, 40))))
  end do
  !$omp end do
  !$omp end parallel
  do i = 1, n
     ir = iand(ir, not(ishft(1_8, mod(i, 40))))
  end do
  call ot_check_i8('reduction(iand) iand in a parallel do', ia, ir)
  call ot_check_i8('reduction(iand) iand in a do', ib, ir)
  call ot_print_i8('reduction(iand)', ia)

  ! ior
  ia = 1_8
  ib = 1_8
  ir = 1_8
  !$omp parallel do schedule(static) reduction(ior:ia)
  do i = 1, n
     ia = ior(ia, ishft(1_8, mod(i * 7, 50)))
  end do
  !$omp end parallel do
  !$omp parallel
  !$omp do schedule(dynamic, 50) reduction(ior:ib)
  do i = 1, n
     ib = ior(ib, ishft(1_8, mod(i * 7, 50)))
  end do
  !$omp end do
  !$omp end parallel
  do i = 1, n
     ir = ior(ir, ishft(1_8, mod(i * 7, 50)))
  end do
  call ot_check_i8('reduction(ior) ior in a parallel do', ia, ir)
  call ot_check_i8('reduction(ior) ior in a do', ib, ir)
  call ot_print_i8('reduction(ior)', ia)

  ! ieor
  ia = 5_8
  ib = 5_8
  ir = 5_8
  !$omp parallel do schedule(static) reduction(ieor:ia)
  do i = 1, n
     ia = ieor(ia, int(i, 8) * 2654435761_8)
  end do
  !$omp end parallel do
  !$omp parallel
  !$omp do schedule(dynamic, 50) reduction(ieor:ib)
  do i = 1, n
     ib = ieor(ib, int(i, 8) * 2654435761_8)
  end do
  !$omp end do
  !$omp end parallel
  do i = 1, n
     ir = ieor(ir, int(i, 8) * 2654435761_8)
  end do
  call ot_check_i8('reduction(ieor) ieor in a parallel do', ia, ir)
  call ot_check_i8('reduction(ieor) ieor in a do', ib, ir)
  call ot_print_i8('reduction(ieor)', ia)

  ! .and.
  la = .true.
  lb = .true.
  lr = .true.
  !$omp parallel do schedule(static) reduction(.and.:la)
  do i = 1, n
     la = la .and. (i /= 777)
  end do
  !$omp end parallel do
  !$omp parallel
  !$omp do schedule(dynamic, 50) reduction(.and.:lb)
  do i = 1, n
     lb = lb .and. (i /= 777)
  end do
  !$omp end do
  !$omp end parallel
  do i = 1, n
     lr = lr .and. (i /= 777)
  end do
  call ot_check_log('reduction(.and.) .and. in a parallel do', la, lr)
  call ot_check_log('reduction(.and.) .and. in a do', lb, lr)
  call ot_print_log('reduction(.and.)', la)

  ! .and. (all)
  la = .true.
  lb = .true.
  lr = .true.
  !$omp parallel do schedule(static) reduction(.and.:la)
  do i = 1, n
     la = la .and. (i > 0)
  end do
  !$omp end parallel do
  !$omp parallel
  !$omp do schedule(dynamic, 50) reduction(.and.:lb)
  do i = 1, n
     lb = lb .and. (i > 0)
  end do
  !$omp end do
  !$omp end parallel
  do i = 1, n
     lr = lr .and. (i > 0)
  end do
  call ot_check_log('reduction(.and.) .and. (all) in a parallel do', la, lr)
  call ot_check_log('reduction(.and.) .and. (all) in a do', lb, lr)
  call ot_print_log('reduction(.and. (all))', la)

  ! .or.
  la = .false.
  lb = .false.
  lr = .false.
  !$omp parallel do schedule(static) reduction(.or.:la)
  do i = 1, n
     la = la .or. (i == 777)
  end do
  !$omp end parallel do
  !$omp parallel
  !$omp do schedule(dynamic, 50) reduction(.or.:lb)
  do i = 1, n
     lb = lb .or. (i == 777)
  end do
  !$omp end do
  !$omp end parallel
  do i = 1, n
     lr = lr .or. (i == 777)
  end do
  call ot_check_log('reduction(.or.) .or. in a parallel do', la, lr)
  call ot_check_log('reduction(.or.) .or. in a do', lb, lr)
  call ot_print_log('reduction(.or.)', la)

  ! .or. (none)
  la = .false.
  lb = .false.
  lr = .false.
  !$omp parallel do schedule(static) reduction(.or.:la)
  do i = 1, n
     la = la .or. (i < 0)
  end do
  !$omp end parallel do
  !$omp parallel
  !$omp do schedule(dynamic, 50) reduction(.or.:lb)
  do i = 1, n
     lb = lb .or. (i < 0)
  end do
  !$omp end do
  !$omp end parallel
  do i = 1, n
     lr = lr .or. (i < 0)
  end do
  call ot_check_log('reduction(.or.) .or. (none) in a parallel do', la, lr)
  call ot_check_log('reduction(.or.) .or. (none) in a do', lb, lr)
  call ot_print_log('reduction(.or. (none))', la)

  ! .eqv.
  la = .true.
  lb = .true.
  lr = .true.
  !$omp parallel do schedule(static) reduction(.eqv.:la)
  do i = 1, n
     la = la .eqv. (mod(i, 7) /= 0)
  end do
  !$omp end parallel do
  !$omp parallel
  !$omp do schedule(dynamic, 50) reduction(.eqv.:lb)
  do i = 1, n
     lb = lb .eqv. (mod(i, 7) /= 0)
  end do
  !$omp end do
  !$omp end parallel
  do i = 1, n
     lr = lr .eqv. (mod(i, 7) /= 0)
  end do
  call ot_check_log('reduction(.eqv.) .eqv. in a parallel do', la, lr)
  call ot_check_log('reduction(.eqv.) .eqv. in a do', lb, lr)
  call ot_print_log('reduction(.eqv.)', la)

  ! .neqv.
  la = .false.
  lb = .false.
  lr = .false.
  !$omp parallel do schedule(static) reduction(.neqv.:la)
  do i = 1, n
     la = la .neqv. (mod(i, 3) == 0)
  end do
  !$omp end parallel do
  !$omp parallel
  !$omp do schedule(dynamic, 50) reduction(.neqv.:lb)
  do i = 1, n
     lb = lb .neqv. (mod(i, 3) == 0)
  end do
  !$omp end do
  !$omp end parallel
  do i = 1, n
     lr = lr .neqv. (mod(i, 3) == 0)
  end do
  call ot_check_log('reduction(.neqv.) .neqv. in a parallel do', la, lr)
  call ot_check_log('reduction(.neqv.) .neqv. in a do', lb, lr)
  call ot_print_log('reduction(.neqv.)', la)

  ! real +
  ra = 0.5d0
  rb = 0.5d0
  rr = 0.5d0
  !$omp parallel do schedule(static) reduction(+:ra)
  do i = 1, n
     ra = ra + 0.25d0 * i
  end do
  !$omp end parallel do
  !$omp parallel
  !$omp do schedule(dynamic, 50) reduction(+:rb)
  do i = 1, n
     rb = rb + 0.25d0 * i
  end do
  !$omp end do
  !$omp end parallel
  do i = 1, n
     rr = rr + 0.25d0 * i
  end do
  call ot_check_dbl('reduction(+) real + in a parallel do', ra, rr)
  call ot_check_dbl('reduction(+) real + in a do', rb, rr)
  call ot_print_dbl('reduction(real +)', ra)

  ! real -
  ra = 2.0d0
  rb = 2.0d0
  rr = 2.0d0
  !$omp parallel do schedule(static) reduction(-:ra)
  do i = 1, n
     ra = ra - 0.5d0 * i
  end do
  !$omp end parallel do
  !$omp parallel
  !$omp do schedule(dynamic, 50) reduction(-:rb)
  do i = 1, n
     rb = rb - 0.5d0 * i
  end do
  !$omp end do
  !$omp end parallel
  do i = 1, n
     rr = rr - 0.5d0 * i
  end do
  call ot_check_dbl('reduction(-) real - in a parallel do', ra, rr)
  call ot_check_dbl('reduction(-) real - in a do', rb, rr)
  call ot_print_dbl('reduction(real -)', ra)

  ! real *
  ra = 1.5d0
  rb = 1.5d0
  rr = 1.5d0
  !$omp parallel do schedule(static) reduction(*:ra)
  do i = 1, n
     ra = ra * dble(fac(i))
  end do
  !$omp end parallel do
  !$omp parallel
  !$omp do schedule(dynamic, 50) reduction(*:rb)
  do i = 1, n
     rb = rb * dble(fac(i))
  end do
  !$omp end do
  !$omp end parallel
  do i = 1, n
     rr = rr * dble(fac(i))
  end do
  call ot_check_dbl('reduction(*) real * in a parallel do', ra, rr)
  call ot_check_dbl('reduction(*) real * in a do', rb, rr)
  call ot_print_dbl('reduction(real *)', ra)

  ! real max
  ra = -1.0d0
  rb = -1.0d0
  rr = -1.0d0
  !$omp parallel do schedule(static) reduction(max:ra)
  do i = 1, n
     ra = max(ra, 0.125d0 * mod(i * 37, 1001))
  end do
  !$omp end parallel do
  !$omp parallel
  !$omp do schedule(dynamic, 50) reduction(max:rb)
  do i = 1, n
     rb = max(rb, 0.125d0 * mod(i * 37, 1001))
  end do
  !$omp end do
  !$omp end parallel
  do i = 1, n
     rr = max(rr, 0.125d0 * mod(i * 37, 1001))
  end do
  call ot_check_dbl('reduction(max) real max in a parallel do', ra, rr)
  call ot_check_dbl('reduction(max) real max in a do', rb, rr)
  call ot_print_dbl('reduction(real max)', ra)

  ! real min
  ra = 1.0d3
  rb = 1.0d3
  rr = 1.0d3
  !$omp parallel do schedule(static) reduction(min:ra)
  do i = 1, n
     ra = min(ra, 0.125d0 * mod(i * 37, 1001) + 0.5d0)
  end do
  !$omp end parallel do
  !$omp parallel
  !$omp do schedule(dynamic, 50) reduction(min:rb)
  do i = 1, n
     rb = min(rb, 0.125d0 * mod(i * 37, 1001) + 0.5d0)
  end do
  !$omp end do
  !$omp end parallel
  do i = 1, n
     rr = min(rr, 0.125d0 * mod(i * 37, 1001) + 0.5d0)
  end do
  call ot_check_dbl('reduction(min) real min in a parallel do', ra, rr)
  call ot_check_dbl('reduction(min) real min in a do', rb, rr)
  call ot_print_dbl('reduction(real min)', ra)

  ! An array, and two variables on one clause.
  arr = [(int(i, 8), i = 1, 8)]
  arr_ref = arr
  s1 = 0
  s2 = 10
  !$omp parallel do schedule(static, 3) reduction(+:arr, s1, s2)
  do i = 1, n
     arr(mod(i, 8) + 1) = arr(mod(i, 8) + 1) + i
     s1 = s1 + 1
     s2 = s2 + 2 * i
  end do
  !$omp end parallel do
  do i = 1, n
     arr_ref(mod(i, 8) + 1) = arr_ref(mod(i, 8) + 1) + i
  end do
  do i = 1, 8
     call ot_check_i8('reduction(+) of an array element', arr(i), arr_ref(i))
  end do
  call ot_check_i8('reduction(+:s1) beside an array', s1, int(n, 8))
  call ot_check_i8('reduction(+:s2) beside an array', s2, 10_8 + int(n, 8) * (n + 1))
  call ot_print_i8('array sum', sum(arr))
  call ot_print_i8('s1', s1)
  call ot_print_i8('s2', s2)
  call ot_finish()

contains

  ! 2 every 100th iteration, -1 every 333rd, otherwise 1.
  integer(8) function fac(k)
    integer, intent(in) :: k
    fac = 1
    if (mod(k, 100) == 0) fac = 2
    if (mod(k, 333) == 0) fac = -1
  end function fac
end program f_reduction
