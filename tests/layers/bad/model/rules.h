// Fixture for the layering check: an include without its layer folder.
#include "window.h"
