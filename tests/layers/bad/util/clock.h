// Fixture for the layering check: a bottom layer reaching up.
#include "model/rules.h"
