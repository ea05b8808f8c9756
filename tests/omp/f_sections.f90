! f_sections.f90 - "sections" and "parallel sections".
!
! Each section runs exactly once, 20 constructs in a row in one region
! (each with its barrier); firstprivate (every section sees the initial
! thread's value), lastprivate (the value of the lexically last section),
! reduction(+), nowait followed by a barrier; "parallel sections" with
! more sections than threads, and with num_threads(2) (a team of 2 from a
! default team of 2 or more).
module f_sections_data
  implicit none
  integer, parameter :: rounds = 20
  integer :: runs(5, rounds) = 0
  integer :: psruns(6) = 0, ps2runs(3) = 0, nowait_runs(2) = 0
  integer :: team2 = 0
end module f_sections_data

program f_sections
  use omp_lib
  use omptest
  use f_sections_data
  implicit none
  integer :: nt, r, fp, lp, bad_fp
  integer(8) :: red

  call ot_start('f_sections')
  nt = ot_team_size()
  call ot_print_int('threads', nt)
  fp = 42
  lp = -1
  red = 0
  bad_fp = 0

  !$omp parallel private(r) reduction(+:bad_fp)
  do r = 1, rounds
     !$omp sections firstprivate(fp) lastprivate(lp) reduction(+:red)
     !$omp section
     runs(1, r) = runs(1, r) + 1
     if (fp /= 42) bad_fp = bad_fp + 1
     lp = 1
     red = red + 1
     !$omp section
     runs(2, r) = runs(2, r) + 1
     if (fp /= 42) bad_fp = bad_fp + 1
     lp = 2
     red = red + 10
     !$omp section
     runs(3, r) = runs(3, r) + 1
     lp = 3
     red = red + 100
     !$omp section
     runs(4, r) = runs(4, r) + 1
     red = red + 1000
     lp = 4
     !$omp section
     runs(5, r) = runs(5, r) + 1
     if (fp /= 42) bad_fp = bad_fp + 1
     fp = -1
     lp = 5 * r
     red = red + 10000
     !$omp end sections
  end do
  !$omp sections
  !$omp section
  nowait_runs(1) = nowait_runs(1) + 1
  !$omp section
  nowait_runs(2) = nowait_runs(2) + 1
  !$omp end sections nowait
  !$omp barrier
  !$omp end parallel

  call ot_check_int('sections not run exactly once', count(runs /= 1), 0)
  call ot_check_int('firstprivate seen wrong', bad_fp, 0)
  call ot_check_int('lastprivate from the last section', lp, 5 * rounds)
  call ot_check_i8('reduction over the sections', red, 11111_8 * rounds)
  call ot_check_int('sections nowait not run once', count(nowait_runs /= 1), 0)

  !$omp parallel sections
  !$omp section
  psruns(1) = psruns(1) + 1
  !$omp section
  psruns(2) = psruns(2) + 1
  !$omp section
  psruns(3) = psruns(3) + 1
  !$omp section
  psruns(4) = psruns(4) + 1
  !$omp section
  psruns(5) = psruns(5) + 1
  !$omp section
  psruns(6) = psruns(6) + 1
  !$omp end parallel sections
  call ot_check_int('parallel sections not run exactly once', count(psruns /= 1), 0)

  !$omp parallel sections num_threads(2)
  !$omp section
  ps2runs(1) = ps2runs(1) + 1
  !$omp atomic
  team2 = max(team2, omp_get_num_threads())
  !$omp section
  ps2runs(2) = ps2runs(2) + 1
  !$omp section
  ps2runs(3) = ps2runs(3) + 1
  !$omp end parallel sections
  call ot_check_int('num_threads(2) sections not run once', count(ps2runs /= 1), 0)
  ! With a default team of one, a larger request is up to the
  ! implementation (libgomp gives 2).
  if (nt >= 2) then
     call ot_check_int('num_threads(2) team size', team2, 2)
  else
     call ot_check(team2 == 1 .or. team2 == 2, 'num_threads(2) team size not 1 or 2')
  end if

  call ot_print_int('lastprivate', lp)
  call ot_print_i8('reduction', red)
  call ot_print_int('parallel sections runs', sum(psruns))
  if (nt >= 2) call ot_print_int('num_threads(2) team', team2)
  call ot_finish()
end program f_sections
