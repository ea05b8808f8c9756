! f_automatic.f90 - automatic arrays on the stacks of the threads.
!
!  - every thread calls a subroutine whose automatic array (its size an
!    argument, different per thread, up to 160 KB) is on that thread's
!    stack: filled, summed, 20 calls per thread;
!  - each thread's automatic array (TARGET) is published through a module
!    array of pointers; after a barrier the next thread reads it whole, and
!    only after a second barrier does the owner return (its stack frame
!    is live as long as anyone reads it);
!  - an automatic array of the initial thread (a subroutine called by the
!    main program) shared by a parallel do inside that subroutine, read
!    back there after the region, and passed to an orphaned reduction.
module f_automatic_data
  implicit none
  type view
     real(8), pointer :: p(:) => null()
  end type view
  type(view) :: views(0:63)
contains
  ! An automatic array of m elements on the calling thread's stack.
  real(8) function local_sum(m, seed)
    integer, intent(in) :: m, seed
    real(8) :: w(m)
    integer :: i
    do i = 1, m
       w(i) = dble(mod(i + seed, 100))
    end do
    local_sum = sum(w)
  end function local_sum

  ! Publish an automatic array; the next thread reads it.
  subroutine publish(me, nt, m, bad)
    use omp_lib
    integer, intent(in) :: me, nt, m
    integer, intent(inout) :: bad
    real(8), target :: w(m + 100 * me)
    integer :: nxt, i
    do i = 1, size(w)
       w(i) = 1000d0 * me + i
    end do
    call point_at(me, w)
    !$omp barrier
    nxt = mod(me + 1, nt)
    if (.not. associated(views(nxt)%p)) then
       bad = bad + 1
    else if (size(views(nxt)%p) /= m + 100 * nxt) then
       bad = bad + 1
    else
       do i = 1, size(views(nxt)%p)
          if (views(nxt)%p(i) /= 1000d0 * nxt + i) then
             bad = bad + 1
             exit
          end if
       end do
    end if
    !$omp barrier
    views(me)%p => null()
  end subroutine publish

  ! views(me) points at w (through a dummy argument, so that the compiler
  ! does not warn that the pointer outlives the automatic array: publish
  ! nullifies it before it returns).
  subroutine point_at(me, w)
    integer, intent(in) :: me
    real(8), target, intent(inout) :: w(:)
    views(me)%p => w
  end subroutine point_at

  ! Sum of a shared array, an orphaned reduction.
  real(8) function orphan_sum(a, m)
    integer, intent(in) :: m
    real(8), intent(in) :: a(m)
    real(8) :: s
    integer :: i
    s = 0
    !$omp parallel do schedule(guided) reduction(+:s)
    do i = 1, m
       s = s + a(i)
    end do
    !$omp end parallel do
    orphan_sum = s
  end function orphan_sum

  ! The initial thread's automatic array, shared by the team.
  subroutine initial_stack(m, total, bad)
    integer, intent(in) :: m
    real(8), intent(out) :: total
    integer, intent(out) :: bad
    real(8) :: a(m)
    integer :: i
    a = -1
    !$omp parallel do schedule(static, 64)
    do i = 1, m
       a(i) = 0.5d0 * i
    end do
    !$omp end parallel do
    bad = count([(a(i) /= 0.5d0 * i, i = 1, m)])
    total = orphan_sum(a, m)
  end subroutine initial_stack
end module f_automatic_data

program f_automatic
  use omp_lib
  use omptest
  use f_automatic_data
  implicit none
  integer, parameter :: mbase = 20000
  integer :: nt, me, k, bad, bad_pub, m
  real(8) :: s, want, total

  call ot_start('f_automatic')
  nt = ot_team_size()
  call ot_print_int('threads', nt)

  bad = 0
  !$omp parallel private(me, k, s, want, m) reduction(+:bad)
  me = omp_get_thread_num()
  do k = 1, 20
     m = mbase - 500 * me + k
     s = local_sum(m, me + k)
     want = reference(m, me + k)
     if (s /= want) bad = bad + 1
  end do
  !$omp end parallel
  call ot_check_int('sums of automatic arrays wrong', bad, 0)

  bad_pub = 0
  !$omp parallel private(me) reduction(+:bad_pub)
  me = omp_get_thread_num()
  call publish(me, omp_get_num_threads(), 3000, bad_pub)
  !$omp end parallel
  call ot_check_int('automatic arrays read by the next thread: wrong', bad_pub, 0)

  call initial_stack(mbase, total, bad)
  call ot_check_int('the initial thread''s automatic array: wrong', bad, 0)
  call ot_check_dbl('its sum', total, 0.25d0 * mbase * (mbase + 1))

  call ot_print_dbl('initial stack sum', total)
  call ot_finish()

contains

  real(8) function reference(m, seed)
    integer, intent(in) :: m, seed
    integer :: i
    reference = 0
    do i = 1, m
       reference = reference + dble(mod(i + seed, 100))
    end do
  end function reference
end program f_automatic
