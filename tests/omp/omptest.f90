! omptest.f90 - the helpers of the Fortran OpenMP tests in tests/omp
! (f_*.f90): the Fortran counterpart of omptest.h, with the same rules.
!
! Each test is a plain OpenMP Fortran program (use omp_lib, no DSM call)
! built twice: with gfortran -fopenmp against the stock libgomp
! (f_PROG.gomp) and with dsmcc against omp-shim (f_PROG.dsm).  The build
! compiles this file in the same command, before the program, into a
! directory of modules of the target's own (-J), so that builds running at
! the same time never write the same .mod file.  run-omp-test.sh runs both
! with the same team size and compares their standard output byte for
! byte, so every test keeps three rules:
!   - stdout is written only by the initial thread outside parallel regions
!     (ot_print and its variants), and only with values that depend on the
!     team size alone, never on the schedule, the timing or which thread
!     did what;
!   - a check that fails, in any thread (under the shim: on any rank),
!     counts an error and says on stderr (unit 0) what was expected and
!     what was found;
!   - the program ends with "call ot_finish()": exit status 0 when every
!     check passed, 1 otherwise.
! A test that cannot run with the team it was given (more threads than its
! per-thread arrays hold) exits 77 with the reason, which the harness shows
! as a skip.
!
! The error counter is a module variable updated with "omp atomic", so that
! under the shim an error seen on another rank reaches rank 0 by the join
! barrier.  Call ot_start('NAME') first: NAME prefixes every line.
module omptest
  use omp_lib
  implicit none
  private
  public :: ot_max_threads, ot_start, ot_error, ot_check, ot_check_int, &
       ot_check_i8, ot_check_dbl, ot_check_log, ot_print, ot_print_int, &
       ot_print_i8, ot_print_dbl, ot_print_log, ot_team_size, ot_error_count, &
       ot_finish

  ! Per-thread arrays in the tests have this many slots.
  integer, parameter :: ot_max_threads = 64
  ! At most this many failed checks are printed; all are counted.
  integer, parameter :: ot_max_reports = 10

  integer, save :: ot_errors = 0
  character(len=40), save :: ot_name = 'f_?'

contains

  ! The program's name, the prefix of every line.  The initial thread,
  ! before the first region.
  subroutine ot_start(name)
    character(len=*), intent(in) :: name
    ot_name = name
  end subroutine ot_start

  ! Count a failed check and print it (the first ot_max_reports of them).
  ! Any thread may call it, inside or outside a parallel region.
  subroutine ot_error(msg)
    character(len=*), intent(in) :: msg
    integer :: k

    !$omp atomic capture
    k = ot_errors
    ot_errors = ot_errors + 1
    !$omp end atomic
    if (k >= ot_max_reports) return
    ! One write per line, so that lines of different threads do not mix.
    write (0, '(a,": FAIL: ",a," (thread ",i0," of ",i0,")")') trim(ot_name), &
         msg, omp_get_thread_num(), omp_get_num_threads()
    flush (0)
  end subroutine ot_error

  ! Check a condition; msg says what was expected.
  subroutine ot_check(cond, msg)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: msg
    if (.not. cond) call ot_error(msg)
  end subroutine ot_check

  ! what: got GOT, expected WANT, unless they are equal.
  subroutine ot_check_int(what, got, want)
    character(len=*), intent(in) :: what
    integer, intent(in) :: got, want
    character(len=300) :: line
    if (got /= want) then
       write (line, '(a,": got ",i0,", expected ",i0)') what, got, want
       call ot_error(trim(line))
    end if
  end subroutine ot_check_int

  subroutine ot_check_i8(what, got, want)
    character(len=*), intent(in) :: what
    integer(8), intent(in) :: got, want
    character(len=300) :: line
    if (got /= want) then
       write (line, '(a,": got ",i0,", expected ",i0)') what, got, want
       call ot_error(trim(line))
    end if
  end subroutine ot_check_i8

  ! Exact comparison: the tests choose values that every order of
  ! combination computes exactly.
  subroutine ot_check_dbl(what, got, want)
    character(len=*), intent(in) :: what
    real(8), intent(in) :: got, want
    character(len=300) :: line
    if (got /= want) then
       write (line, '(a,": got ",g0,", expected ",g0)') what, got, want
       call ot_error(trim(line))
    end if
  end subroutine ot_check_dbl

  subroutine ot_check_log(what, got, want)
    character(len=*), intent(in) :: what
    logical, intent(in) :: got, want
    character(len=300) :: line
    if (got .neqv. want) then
       write (line, '(a,": got ",l1,", expected ",l1)') what, got, want
       call ot_error(trim(line))
    end if
  end subroutine ot_check_log

  ! One line of the test's deterministic output: "NAME: text".  Only the
  ! initial thread outside parallel regions calls it.
  subroutine ot_print(text)
    character(len=*), intent(in) :: text
    write (*, '(a,": ",a)') trim(ot_name), text
  end subroutine ot_print

  ! "NAME: label=value"
  subroutine ot_print_int(label, v)
    character(len=*), intent(in) :: label
    integer, intent(in) :: v
    write (*, '(a,": ",a,"=",i0)') trim(ot_name), label, v
  end subroutine ot_print_int

  subroutine ot_print_i8(label, v)
    character(len=*), intent(in) :: label
    integer(8), intent(in) :: v
    write (*, '(a,": ",a,"=",i0)') trim(ot_name), label, v
  end subroutine ot_print_i8

  ! Doubles with a fixed format: the same digits from both builds.
  subroutine ot_print_dbl(label, v)
    character(len=*), intent(in) :: label
    real(8), intent(in) :: v
    write (*, '(a,": ",a,"=",es24.16e3)') trim(ot_name), label, v
  end subroutine ot_print_dbl

  subroutine ot_print_log(label, v)
    character(len=*), intent(in) :: label
    logical, intent(in) :: v
    write (*, '(a,": ",a,"=",l1)') trim(ot_name), label, v
  end subroutine ot_print_log

  ! The team size of a parallel region without num_threads: the value of
  ! omp_get_max_threads() in the initial thread.  Exits 77 (skip) when the
  ! per-thread arrays of the tests are too small for it.
  integer function ot_team_size()
    ot_team_size = omp_get_max_threads()
    if (ot_team_size < 1 .or. ot_team_size > ot_max_threads) then
       write (*, '(a,": SKIP: team size ",i0," is outside 1..",i0,a)') &
            trim(ot_name), ot_team_size, ot_max_threads, &
            ", the size of the test's per-thread arrays"
       flush (6)
       stop 77
    end if
  end function ot_team_size

  ! The number of failed checks so far, read atomically as it is written.
  integer function ot_error_count()
    !$omp atomic read
    ot_error_count = ot_errors
  end function ot_error_count

  ! End of the test: exit status 0 when every check passed, 1 otherwise.
  subroutine ot_finish()
    integer :: errors
    errors = ot_error_count()
    flush (6)
    if (errors /= 0) then
       write (0, '(a,": FAIL: ",i0," check(s) failed")') trim(ot_name), errors
       flush (0)
       stop 1
    end if
  end subroutine ot_finish

end module omptest
