! f_threadprivate.f90 - threadprivate COMMON blocks and module variables,
! copyin.
!
! A COMMON block (/f_tp_blk/: an integer, a real(8), an array of 4
! integer(8)) and a module integer with an initialiser are threadprivate:
!   - the initial thread sets its copies before a region; copyin(/f_tp_blk/)
!     copies the whole block into every thread's copy at the start of the
!     region (gfortran passes the address of the initial thread's copy,
!     thread-local storage, to the others);
!   - each thread then sets its own values; in the next region (same team,
!     no copyin) every thread finds its own values again, and the initial
!     thread keeps its own after the region;
!   - a variable of a second block (set by BLOCK DATA) and the module
!     variable, which the initial thread does not change before the first
!     region, start at their initialisers in every thread;
!   - a second copyin, of the module variable alone, after the initial
!     thread changed it.
module f_threadprivate_data
  use omptest
  implicit none
  integer :: tp_mod = 9
  !$omp threadprivate(tp_mod)
  integer :: bad_copyin(0:ot_max_threads - 1) = 0, bad_persist(0:ot_max_threads - 1) = 0
  integer :: bad_init(0:ot_max_threads - 1) = 0, bad_second(0:ot_max_threads - 1) = 0
end module f_threadprivate_data

block data f_threadprivate_init
  implicit none
  integer :: untouched
  common /f_tp_init/ untouched
  !$omp threadprivate(/f_tp_init/)
  data untouched /17/
end block data f_threadprivate_init

program f_threadprivate
  use omp_lib
  use omptest
  use f_threadprivate_data
  implicit none
  integer(8) :: tparr(4)
  real(8) :: tpd
  integer :: tpi
  common /f_tp_blk/ tparr, tpd, tpi
  !$omp threadprivate(/f_tp_blk/)
  integer :: untouched
  common /f_tp_init/ untouched
  !$omp threadprivate(/f_tp_init/)
  integer :: nt, me, k

  call ot_start('f_threadprivate')
  nt = ot_team_size()
  call ot_print_int('threads', nt)

  tpi = 5
  tpd = 2.5d0
  tparr = [10_8, 20_8, 30_8, 40_8]

  !$omp parallel private(me, k) copyin(/f_tp_blk/)
  me = omp_get_thread_num()
  if (tpi /= 5 .or. tpd /= 2.5d0 .or. any(tparr /= [10_8, 20_8, 30_8, 40_8])) &
       bad_copyin(me) = bad_copyin(me) + 1
  if (untouched /= 17 .or. tp_mod /= 9) bad_init(me) = bad_init(me) + 1
  tpi = 100 + me
  tpd = 0.5d0 * me
  do k = 1, 4
     tparr(k) = 1000_8 * me + k
  end do
  tp_mod = 50 + me
  !$omp end parallel

  ! The initial thread keeps what it set in the region (thread 0).
  call ot_check_int('the initial thread''s copy after the region', tpi, 100)

  !$omp parallel private(me, k)
  me = omp_get_thread_num()
  if (tpi /= 100 + me .or. tpd /= 0.5d0 * me .or. tp_mod /= 50 + me) &
       bad_persist(me) = bad_persist(me) + 1
  do k = 1, 4
     if (tparr(k) /= 1000_8 * me + k) bad_persist(me) = bad_persist(me) + 1
  end do
  !$omp end parallel

  tp_mod = 77
  !$omp parallel private(me) copyin(tp_mod)
  me = omp_get_thread_num()
  if (tp_mod /= 77) bad_second(me) = bad_second(me) + 1
  ! The block was not copied in: still each thread's own.
  if (tpi /= 100 + me) bad_second(me) = bad_second(me) + 1
  !$omp end parallel

  call ot_check_int('threads with a wrong copyin', count(bad_copyin(0:nt - 1) /= 0), 0)
  call ot_check_int('threads without the initial values', count(bad_init(0:nt - 1) /= 0), 0)
  call ot_check_int('threads whose values did not persist', count(bad_persist(0:nt - 1) /= 0), 0)
  call ot_check_int('threads with a wrong second copyin', count(bad_second(0:nt - 1) /= 0), 0)
  call ot_print_int('copyin ok', count(bad_copyin(0:nt - 1) == 0))
  call ot_print_int('persist ok', count(bad_persist(0:nt - 1) == 0))
  call ot_print_int('second copyin ok', count(bad_second(0:nt - 1) == 0))
  call ot_finish()
end program f_threadprivate
