! f_module_array.f90 - module variables shared by the team.
!
! A module holds an initialised array (.data), 100,000 doubles (.bss), an
! array of a derived type with an array component, a module allocatable
! array allocated by the initial thread before the regions, and a parameter
! table.  Module procedures called in the region work on them: a stencil
! from one array into another (every thread reads its neighbours' shares,
! written before a barrier), the particles moved by a static loop and
! summed by a dynamic one; 5 rounds, checked against the sequential
! computation and element by element after each region.
module f_module_array_data
  implicit none
  integer, parameter :: n = 100000, np = 1000
  integer, parameter :: table(8) = [1, 1, 2, 3, 5, 8, 13, 21]
  real(8) :: a(n)
  real(8) :: weights(4) = [0.25d0, 0.5d0, 0.125d0, 0.125d0]
  type particle
     real(8) :: pos(3)
     integer :: tag
  end type particle
  type(particle) :: parts(np)
  real(8), allocatable :: b(:)
contains
  ! b(i) = weights . (a(i-1), a(i), a(i+1), a(i)); the ends use a(i) alone.
  subroutine stencil()
    integer :: i
    !$omp do schedule(static)
    do i = 1, n
       if (i == 1 .or. i == n) then
          b(i) = a(i)
       else
          b(i) = weights(1) * a(i - 1) + weights(2) * a(i) &
               + weights(3) * a(i + 1) + weights(4) * a(i)
       end if
    end do
    !$omp end do
  end subroutine stencil

  subroutine move(r)
    integer, intent(in) :: r
    integer :: p
    !$omp do schedule(static, 16)
    do p = 1, np
       parts(p)%pos = parts(p)%pos + [1d0, 2d0, 4d0] * table(mod(p + r, 8) + 1)
       parts(p)%tag = parts(p)%tag + 1
    end do
    !$omp end do
  end subroutine move
end module f_module_array_data

program f_module_array
  use omp_lib
  use omptest
  use f_module_array_data
  implicit none
  integer :: nt, i, p, r, bad
  real(8) :: ref(n), possum, want_pos

  call ot_start('f_module_array')
  nt = ot_team_size()
  call ot_print_int('threads', nt)
  allocate (b(n))
  do p = 1, np
     parts(p)%pos = 0
     parts(p)%tag = p
  end do

  do r = 1, 5
     bad = 0
     possum = 0
     !$omp parallel private(i) reduction(+:bad)
     !$omp do schedule(static)
     do i = 1, n
        a(i) = dble(mod(i * 7 + r, 64))
     end do
     !$omp end do
     call stencil()
     call move(r)
     ! Every thread checks a strided part of all of b.
     do i = omp_get_thread_num() + 1, n, omp_get_num_threads() * 5
        if (b(i) /= expect(i, r)) bad = bad + 1
     end do
     !$omp do schedule(dynamic, 50) reduction(+:possum)
     do p = 1, np
        possum = possum + sum(parts(p)%pos)
     end do
     !$omp end do
     !$omp end parallel
     call ot_check_int('stencil values wrong in the team', bad, 0)
     do i = 1, n
        ref(i) = expect(i, r)
     end do
     call ot_check_int('stencil values wrong after the region', count(b /= ref), 0)
     want_pos = 0
     do p = 1, np
        want_pos = want_pos + 7d0 * sum([(table(mod(p + i, 8) + 1), i = 1, r)])
     end do
     call ot_check_dbl('sum of the particles', possum, want_pos)
     call ot_check_int('particle tags', count([(parts(p)%tag /= p + r, p = 1, np)]), 0)
  end do

  call ot_print_dbl('sum of b', sum(b))
  call ot_print_dbl('sum of the particles', possum)
  deallocate (b)
  call ot_finish()

contains

  real(8) function expect(i, r)
    integer, intent(in) :: i, r
    real(8) :: l, c, rr
    c = dble(mod(i * 7 + r, 64))
    if (i == 1 .or. i == n) then
       expect = c
    else
       l = dble(mod((i - 1) * 7 + r, 64))
       rr = dble(mod((i + 1) * 7 + r, 64))
       expect = 0.25d0 * l + 0.5d0 * c + 0.125d0 * rr + 0.125d0 * c
    end if
  end function expect
end program f_module_array
