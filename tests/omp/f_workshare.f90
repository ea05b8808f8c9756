! f_workshare.f90 - "workshare" and "parallel workshare".
!
! Array assignments (gfortran shares their elements among the threads as
! a static loop), WHERE with ELSEWHERE, FORALL, a scalar assignment from
! an array intrinsic (SUM, MAXVAL: one thread, then everybody sees it),
! statements that depend on the one before (each ends with a barrier),
! and a workshare with nowait followed by a barrier; on module arrays and
! on an allocatable of the main program; 10 rounds, each checked against
! the same statements run sequentially.
module f_workshare_data
  implicit none
  integer, parameter :: n = 30000
  real(8) :: a(n), b(n), c(n)
end module f_workshare_data

program f_workshare
  use omp_lib
  use omptest
  use f_workshare_data
  implicit none
  real(8), allocatable :: d(:)
  real(8) :: ra(n), rb(n), rc(n), rd(n)
  real(8) :: total, top, rtotal, rtop
  integer :: nt, r, i

  call ot_start('f_workshare')
  nt = ot_team_size()
  call ot_print_int('threads', nt)
  allocate (d(n))

  do r = 1, 10
     !$omp parallel workshare
     a = [(dble(mod(i * r, 97)), i = 1, n)]
     b = 2 * a + r
     where (a > 48)
        c = a - 48
     elsewhere
        c = -a
     end where
     forall (i = 1:n:2) d(i) = b(i) + c(i)
     forall (i = 2:n:2) d(i) = b(i) - c(i)
     total = sum(d)
     top = maxval(c)
     !$omp end parallel workshare

     ! The same, sequentially.
     ra = [(dble(mod(i * r, 97)), i = 1, n)]
     rb = 2 * ra + r
     where (ra > 48)
        rc = ra - 48
     elsewhere
        rc = -ra
     end where
     forall (i = 1:n:2) rd(i) = rb(i) + rc(i)
     forall (i = 2:n:2) rd(i) = rb(i) - rc(i)
     rtotal = sum(rd)
     rtop = maxval(rc)
     call ot_check_int('workshare a: elements wrong', count(a /= ra), 0)
     call ot_check_int('workshare b: elements wrong', count(b /= rb), 0)
     call ot_check_int('workshare where: elements wrong', count(c /= rc), 0)
     call ot_check_int('workshare forall: elements wrong', count(d /= rd), 0)
     call ot_check_dbl('workshare sum', total, rtotal)
     call ot_check_dbl('workshare maxval', top, rtop)
  end do

  ! workshare inside a region, nowait then a barrier, then a second one.
  !$omp parallel
  !$omp workshare
  a = 1
  b = 2
  !$omp end workshare nowait
  !$omp barrier
  !$omp workshare
  c = a + b
  total = sum(c)
  !$omp end workshare
  !$omp end parallel
  call ot_check_dbl('workshare in a region: sum', total, 3d0 * n)
  call ot_check_int('workshare in a region: elements wrong', count(c /= 3), 0)

  call ot_print_dbl('sum', total)
  call ot_print_dbl('last round sum', rtotal)
  call ot_print_dbl('last round max', rtop)
  call ot_finish()
end program f_workshare
