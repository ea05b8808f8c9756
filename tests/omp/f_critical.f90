! f_critical.f90 - Fortran "critical", unnamed and named.
!
! An unnamed critical section and two named ones (alpha, beta) guard
! non-atomic updates of COMMON and module variables; an "inside" count
! per section shows any overlap.  alpha and beta nest in one order
! (alpha around beta), and the unnamed one contains alpha.  A named
! section also guards appends to a shared list, which must come out
! complete with every thread's entries.  ITERS rounds per thread.
module f_critical_data
  implicit none
  integer, parameter :: iters = 100
  integer :: inside_alpha = 0, inside_beta = 0
  integer(8) :: count_alpha = 0, count_beta = 0
  integer :: list(64 * iters), list_len = 0
end module f_critical_data

program f_critical
  use omp_lib
  use omptest
  use f_critical_data
  implicit none
  integer :: nt, t, k
  integer :: inside_plain
  integer(8) :: count_plain, count_nested
  integer :: per_thread(0:ot_max_threads - 1)
  common /f_critical_plain/ count_plain, count_nested, inside_plain

  call ot_start('f_critical')
  nt = ot_team_size()
  call ot_print_int('threads', nt)
  inside_plain = 0
  count_plain = 0
  count_nested = 0

  !$omp parallel private(k)
  do k = 1, iters
     !$omp critical
     inside_plain = inside_plain + 1
     if (inside_plain /= 1) call ot_error('two threads inside the unnamed critical')
     count_plain = count_plain + omp_get_thread_num() + 1
     inside_plain = inside_plain - 1
     !$omp end critical

     !$omp critical (alpha)
     inside_alpha = inside_alpha + 1
     if (inside_alpha /= 1) call ot_error('two threads inside critical (alpha)')
     count_alpha = count_alpha + 2
     list_len = list_len + 1
     list(list_len) = omp_get_thread_num()
     inside_alpha = inside_alpha - 1
     !$omp end critical (alpha)

     !$omp critical (beta)
     inside_beta = inside_beta + 1
     if (inside_beta /= 1) call ot_error('two threads inside critical (beta)')
     count_beta = count_beta + 3
     inside_beta = inside_beta - 1
     !$omp end critical (beta)

     ! Nested: unnamed > alpha > beta, always in that order.
     if (mod(k, 10) == 0) then
        !$omp critical
        !$omp critical (alpha)
        !$omp critical (beta)
        count_nested = count_nested + 1
        count_alpha = count_alpha + 2
        count_beta = count_beta + 3
        !$omp end critical (beta)
        !$omp end critical (alpha)
        !$omp end critical
     end if
  end do
  !$omp end parallel

  call ot_check_i8('unnamed critical count', count_plain, int(iters, 8) * nt * (nt + 1) / 2)
  call ot_check_i8('nested critical count', count_nested, int(iters / 10, 8) * nt)
  call ot_check_i8('critical (alpha) count', count_alpha, 2_8 * (iters + iters / 10) * nt)
  call ot_check_i8('critical (beta) count', count_beta, 3_8 * (iters + iters / 10) * nt)
  call ot_check_int('list length', list_len, iters * nt)
  per_thread = 0
  do k = 1, min(list_len, size(list))
     t = list(k)
     if (t < 0 .or. t >= nt) then
        call ot_error('a list entry is not a thread number')
     else
        per_thread(t) = per_thread(t) + 1
     end if
  end do
  do t = 0, nt - 1
     call ot_check_int('list entries of a thread', per_thread(t), iters)
  end do

  call ot_print_i8('unnamed', count_plain)
  call ot_print_i8('alpha', count_alpha)
  call ot_print_i8('beta', count_beta)
  call ot_print_i8('nested', count_nested)
  call ot_print_int('list', list_len)
  call ot_finish()
end program f_critical
