// EventSelection's choice of the event to fold by --event: names as perf
// writes them into the file, with modifiers and with terms.
#include <gtest/gtest.h>

#include "diagnostics/input_error.h"
#include "fold/event_selection.h"

namespace fg {
namespace {

PerfFileInfo with_events(std::initializer_list<const char*> names) {
  PerfFileInfo info;
  for (const char* n : names) {
    EventAttr a;
    a.type = 1;
    a.name = n;
    info.attrs.push_back(a);
  }
  return info;
}

int chosen(const PerfFileInfo& info, const std::string& event) {
  FoldOptions o;
  o.event = event;
  std::vector<std::string> warnings;
  return EventSelection(info, "x.data", o, warnings).folded_attr();
}

TEST(EventSelection, NamesWithModifiersAndTerms) {
  EXPECT_EQ(event_name_without_terms("task-clock/period=100000/"), "task-clock");
  EXPECT_EQ(event_name_without_terms("task-clock/period=100000/:u"), "task-clock:u");
  EXPECT_EQ(event_name_without_terms("cpu-clock:u"), "cpu-clock:u");
  EXPECT_EQ(event_name_without_terms("/weird"), "/weird");
  EXPECT_EQ(event_name_without_terms("a/b"), "a/b");
  EXPECT_TRUE(event_name_matches("cpu-clock:u", "cpu-clock"));
  EXPECT_TRUE(event_name_matches("cpu-clock", "cpu-clock:uk"));
  EXPECT_TRUE(event_name_matches("cycles:W", "cycles"));
  EXPECT_FALSE(event_name_matches("sched:sched_switch", "sched"));
}

TEST(EventSelection, AnEventRecordedWithTermsAnswersToItsName) {
  PerfFileInfo info = with_events({"cpu-clock/period=250000/", "task-clock/period=100000/"});
  EXPECT_EQ(chosen(info, "task-clock"), 1);
  EXPECT_EQ(chosen(info, "cpu-clock"), 0);
  EXPECT_EQ(chosen(info, "task-clock/period=100000/"), 1);
  EXPECT_EQ(chosen(info, "task-clock:u"), 1);
  // The full name wins over a name without terms.
  EXPECT_EQ(chosen(with_events({"cpu-clock/period=1/", "cpu-clock"}), "cpu-clock"), 1);
}

TEST(EventSelection, SeveralEventsOfOneNameMustBeNamedInFull) {
  PerfFileInfo info = with_events({"cpu/cycles/", "cpu/instructions/"});
  try {
    chosen(info, "cpu");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("several events of that name in x.data"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cpu/instructions/"), std::string::npos) << e.what();
  }
  EXPECT_EQ(chosen(info, "cpu/instructions/"), 1);
  EXPECT_THROW(chosen(info, "cycles"), UsageError);
}

}  // namespace
}  // namespace fg
