// printable(): what a message may quote from a file without the terminal acting on it.
#include "core/printable.hpp"

#include <gtest/gtest.h>

namespace labpose {
namespace {

TEST(Printable, PlainTextAndUtf8StayAsTheyAre) {
  EXPECT_EQ(printable("snout"), "snout");
  EXPECT_EQ(printable("C:\\videos\\maus-Größe.avi"), "C:\\videos\\maus-Größe.avi");
  EXPECT_EQ(printable("\xf0\x9f\x90\x81 mouse"), "\xf0\x9f\x90\x81 mouse");
  EXPECT_EQ(printable(""), "");
}

TEST(Printable, TerminalControlsAreEscaped) {
  EXPECT_EQ(printable("\x1b[2Jgone"), "\\x1b[2Jgone");
  EXPECT_EQ(printable("\x1b]0;title\x07"), "\\x1b]0;title\\x07");
  EXPECT_EQ(printable("a\nb\tc\rd\x7f"), "a\\nb\\tc\\rd\\x7f");
  EXPECT_EQ(printable(std::string("nul\0byte", 8)), "nul\\x00byte");
  EXPECT_EQ(printable("\xc2\x9b"
                      "31m"),
            "\\u009b31m")
      << "C1 CSI in UTF-8";
  EXPECT_EQ(printable("abc\xe2\x80\xae"
                      "fdp.exe"),
            "abc\\u202efdp.exe")
      << "right-to-left override";
}

TEST(Printable, BytesThatAreNotUtf8AreEscaped) {
  EXPECT_EQ(printable("\x9b"
                      "31m"),
            "\\x9b31m")
      << "a lone 8-bit CSI";
  EXPECT_EQ(printable("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf") << "overlong '/'";
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80") << "a UTF-16 surrogate";
  EXPECT_EQ(printable("cut \xe2\x82"), "cut \\xe2\\x82");
}

TEST(Printable, LongTextIsCutAtACharacterBoundary) {
  EXPECT_EQ(printable(std::string(300, '9'), 10), "9999999999... (290 more bytes)");
  EXPECT_EQ(printable("ab\x1b", 4), "ab... (1 more byte)") << "an escape is never cut in two";
  EXPECT_EQ(printable("a\xc3\xa4", 2), "a... (2 more bytes)");
  EXPECT_EQ(printable("abc", 3), "abc");
}

TEST(PrintableList, JoinsEscapedNamesAndStopsPastTheBound) {
  EXPECT_EQ(printable_list({"snout", "\x1b[2Jtail"}), "snout, \\x1b[2Jtail");
  EXPECT_EQ(printable_list({}), "");
  EXPECT_EQ(printable_list({"aaaa", "bbbb", "cccc"}, 5), "aaaa, bbbb");
}

}  // namespace
}  // namespace labpose
