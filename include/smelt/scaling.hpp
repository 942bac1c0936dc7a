// Scaling laws: fitted per architecture from training runs, and the
// compute-optimal frontier and compute-equivalent gain they imply
// (docs/scaling.md). One header per stage; this one includes them all.
#pragma once

#include "smelt/scaling_fit.hpp"              // Law, FitOptions, fit_law
#include "smelt/scaling_frontier.hpp"         // optimal_allocation, compute_gain, ...
#include "smelt/scaling_frontier_report.hpp"  // frontier_cells, frontier_report_json
#include "smelt/scaling_laws.hpp"             // law files
#include "smelt/scaling_runs.hpp"             // Run, LawForm, read_runs
