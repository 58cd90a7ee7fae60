// FFTW 3 (Debian libfftw3-dev), double precision: the sleep features' spectra.
#include <fftw3.h>
