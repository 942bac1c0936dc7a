// smelt::error and its kinds as the Python classes of smelt/_errors.py, with
// the same message (what()) and, for configuration errors, each violation's
// field, value and rule. The classes live in Python so that they pickle and
// document like any Python exception; this translator only raises them.
#include <exception>

#include <nanobind/stl/string.h>

#include "bindings.hpp"
#include "smelt/error.hpp"

namespace nb = nanobind;

namespace smelt::python {
namespace {

// Held for the life of the interpreter (a module's exception types are).
nb::object* g_errors = nullptr;

// A message as Python text. Messages quote the input's bytes (cut, never
// re-encoded), which need not be UTF-8: those show as U+FFFD instead of
// turning the error into a UnicodeDecodeError.
nb::str text(const std::string& s) {
  return nb::steal<nb::str>(PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace"));
}

void raise(const char* kind, const std::exception& e) {
  nb::object type = g_errors->attr(kind);
  PyErr_SetObject(type.ptr(), text(e.what()).ptr());
}

void raise_config(const char* kind, const config_error& e) {
  nb::object type = g_errors->attr(kind);
  nb::list violations;
  for (const Violation& v : e.violations())
    violations.append(nb::make_tuple(text(v.field), text(v.value), text(v.rule)));
  nb::object exc = type(text(e.what()));
  exc.attr("violations") = violations;
  PyErr_SetObject(type.ptr(), exc.ptr());
}

}  // namespace

void register_errors(nb::module_& m) {
  g_errors = new nb::object(nb::module_::import_("smelt._errors"));  // NOLINT: lives as long as the interpreter
  m.attr("_errors") = *g_errors;
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const config_error& e) {  // overflow_error too: a kind of config_error
      raise_config("ConfigError", e);
    } catch (const infeasible_error& e) {
      raise("InfeasibleError", e);
    } catch (const io_error& e) {
      raise("IOError", e);
    } catch (const cuda_error& e) {
      raise("CudaError", e);
    } catch (const error& e) {
      raise("Error", e);
    }
  });
}

}  // namespace smelt::python
