// A JSON object read from one line or a whole file: members, values as text, an array's elements, and every refusal
// with its position.
#include "lrkit/common/json_object.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace lrkit {
namespace {

std::string refusal_of(const std::string& line) {
  JsonObject object;
  try {
    object.parse(line);
  } catch (const JsonError& e) {
    return e.what();
  }
  return "no error";
}

TEST(JsonObject, ReadsEachMembersTextAndKind) {
  JsonObject object;
  object.parse(R"( {"loss": 1.5e-3, "name": "x\"y\\z\/\n\u00e9\ud83d\ude00", "ok": true, "none": null, "l": NaN,)"
               R"( "g": -Infinity, "nested": {"step": [1, {"i": 2}], "s": "}"}, "empty": [], "n": -0} )");
  ASSERT_EQ(object.size(), 9u);
  EXPECT_EQ(object[0].name, "loss");  // the members in order
  EXPECT_EQ(object[8].name, "n");
  const auto text_of = [&](const char* name) { return object.find(name)->text; };
  const auto kind_of = [&](const char* name) { return object.find(name)->kind; };
  EXPECT_EQ(text_of("loss"), "1.5e-3");
  EXPECT_EQ(kind_of("loss"), JsonMember::Kind::number);
  EXPECT_EQ(text_of("name"), "x\"y\\z/\n\xC3\xA9\xF0\x9F\x98\x80") << "escapes decoded, a surrogate pair as one character";
  EXPECT_EQ(kind_of("name"), JsonMember::Kind::string);
  for (const auto& [name, text] : std::vector<std::pair<const char*, const char*>>{
           {"ok", "true"}, {"none", "null"}, {"l", "NaN"}, {"g", "-Infinity"}}) {
    EXPECT_EQ(text_of(name), text);
    EXPECT_EQ(kind_of(name), JsonMember::Kind::word) << name;
  }
  EXPECT_EQ(text_of("nested"), R"({"step": [1, {"i": 2}], "s": "}"})");
  EXPECT_EQ(kind_of("nested"), JsonMember::Kind::nested);
  EXPECT_EQ(text_of("empty"), "[]");
  EXPECT_EQ(text_of("n"), "-0");
  EXPECT_EQ(object.find("step"), nullptr) << "a nested object's member is not the line's";
  EXPECT_EQ(object.find("los"), nullptr);
}

TEST(JsonObject, TheFirstOfTwoMembersOfOneNameIsFoundAndALineForgetsTheOneBefore) {
  JsonObject object;
  object.parse(R"({"a": 1, "b": 2, "c": 3, "a": 4, "a": 5})");
  EXPECT_EQ(object.find("a")->text, "1");
  const JsonMember* repeat = nullptr;
  EXPECT_EQ(object.find("a", &repeat)->text, "1");
  ASSERT_NE(repeat, nullptr);
  EXPECT_EQ(repeat->text, "4") << "the next of that name";
  repeat = &object[0];
  EXPECT_EQ(object.find("c", &repeat)->text, "3");
  EXPECT_EQ(repeat, nullptr) << "a name written once";
  repeat = &object[0];
  EXPECT_EQ(object.find("d", &repeat), nullptr);
  EXPECT_EQ(repeat, nullptr);
  object.parse(R"({"b": "two"})");
  ASSERT_EQ(object.size(), 1u);
  EXPECT_EQ(object.find("b")->text, "two");
  EXPECT_EQ(object.find("a"), nullptr);
  EXPECT_EQ(object.find("c"), nullptr);
  object.parse("{}");
  EXPECT_EQ(object.size(), 0u);
  object.parse(R"({"\u0061": 5})");
  EXPECT_EQ(object.find("a")->text, "5") << "a name is compared decoded";
}

TEST(JsonObject, ALoneSurrogateIsKeptAsItsOwnCode) {
  JsonObject object;
  object.parse(R"({"note": "\ud800x", "low": "\udc00"})");
  EXPECT_EQ(object.find("note")->text, "\xED\xA0\x80x");
  EXPECT_EQ(object.find("low")->text, "\xED\xB0\x80");
}

TEST(JsonObject, RefusesWhatIsNotOneObjectSayingWhereAndWhy) {
  const std::string deep = std::string(R"({"a": )") + std::string(300, '[') + std::string(300, ']') + "}";
  const std::pair<std::string, std::string> cases[] = {
      {R"([1, 2])", "expected '{' at character 1"},
      {R"({"a": 1)", "the text ends inside the object at character 8"},
      {R"({"a": 1, "lo)", "the text ends inside a string at character 13"},
      {R"({"a" 1})", "expected ':' after a member's name at character 6"},
      {R"({a: 1})", "expected a member's name in double quotes at character 2"},
      {R"({"a": 1,})", "expected a member's name in double quotes at character 9"},
      {R"({"a": 01})", "expected ',' or '}' after a member at character 8"},
      {R"({"a": 1.})", "expected a digit after a number's '.' at character 9"},
      {R"({"a": 1e+})", "expected a digit in a number's exponent at character 10"},
      {R"({"a": -})", "expected a digit in a number at character 8"},
      {R"({"a": +1})", "expected a value (a number, a string, an object, an array, true, false or null) at character 7"},
      {R"({"a": tru})", "expected a value"},
      {R"({"a": NaNa})", "expected ',' or '}' after a member at character 10"},
      {R"({"a": -Infin})", "expected a digit in a number at character 8"},
      {R"({"a": "x\q"})", "'\\q' is not an escape of JSON at character 10"},
      {R"({"a": "\u12G4"})", "expected four hex digits after '\\u' at character 12"},
      {"{\"a\": \"tab\there\"}", "a control character inside a string (JSON writes it as an escape, \\u00XX) at character 11"},
      {R"({"a": 1} x)", "text after the object at character 10"},
      {R"({"a": [1, 2})", "expected ',' or ']' after an array's element at character 12"},
      {R"({"a": {"b" 1}})", "expected ':' after a member's name at character 12"},
      {R"({"a": })", "expected a value"},
      {R"({"a": )", "the text ends where a value should be at character 7"},
      {deep, "values nested deeper than 256 levels"},
  };
  for (const auto& [line, expected] : cases)
    EXPECT_NE(refusal_of(line).find(expected), std::string::npos) << line << "\n" << refusal_of(line);
  const std::string deep_enough = std::string(R"({"a": )") + std::string(200, '[') + std::string(200, ']') + "}";
  EXPECT_EQ(refusal_of(deep_enough), "no error");
}

TEST(JsonObject, AWholeFileIsOneObjectAndAnArraysElementsAreItsTexts) {
  // As Python's json.dumps(indent=2) writes a Hugging Face trainer_state.json.
  const std::string file =
      "{\n  \"log_history\": [\n    {\n      \"learning_rate\": 5e-05,\n      \"step\": 10\n    },\n"
      "    {\"eval_loss\": NaN, \"step\": 20},\n    [],\n    \"s,]\",\n    -1.5e3\n  ],\n  \"max_steps\": 200\n}\n";
  JsonObject object;
  object.parse(file);
  ASSERT_EQ(object.size(), 2u);
  EXPECT_EQ(object.find("max_steps")->text, "200");
  EXPECT_EQ(file.substr(object.find("max_steps")->at, 3), "200") << "where the value lies in the text";
  const JsonMember& history = *object.find("log_history");
  EXPECT_EQ(file.substr(history.at, history.end - history.at), history.text) << "where the value lies in the text";
  object.parse(file, JsonObject::Nested::located);
  EXPECT_EQ(object.find("log_history")->text, "") << "located, not copied";
  EXPECT_EQ(object.find("log_history")->at, history.at);
  EXPECT_EQ(object.find("log_history")->end, history.end);
  EXPECT_EQ(object.find("max_steps")->text, "200") << "a number is copied all the same";
  object.parse(file);
  const auto elements = json_array_elements(object.find("log_history")->text);
  ASSERT_EQ(elements.size(), 5u);
  EXPECT_EQ(elements[0], "{\n      \"learning_rate\": 5e-05,\n      \"step\": 10\n    }")
      << "without the blanks around";
  EXPECT_EQ(elements[1], R"({"eval_loss": NaN, "step": 20})");
  EXPECT_EQ(elements[2], "[]");
  EXPECT_EQ(elements[3], R"("s,]")");
  EXPECT_EQ(elements[4], "-1.5e3");
  object.parse(elements[0]);
  EXPECT_EQ(object.find("learning_rate")->text, "5e-05");
  EXPECT_TRUE(json_array_elements(" [ ] ").empty());
}

TEST(JsonObject, ARefusalSaysItsReasonAndOffsetApart) {
  const auto refusal = [](const auto& read) -> std::pair<std::string, size_t> {
    try {
      read();
    } catch (const JsonError& e) {
      EXPECT_EQ(e.what(), e.reason() + " at character " + std::to_string(e.offset() + 1));
      return {e.reason(), e.offset()};
    }
    return {"no error", 0};
  };
  JsonObject object;
  const std::string expected_value = "expected a value (a number, a string, an object, an array, true, false or null)";
  EXPECT_EQ(refusal([&] { object.parse("{\n  \"a\": [1,\n  2,,\n]}"); }),
            (std::pair<std::string, size_t>{expected_value, 17}));
  EXPECT_EQ(refusal([&] { object.parse("{\"a\": 1\n"); }),
            (std::pair<std::string, size_t>{"the text ends inside the object", 8}));
  EXPECT_EQ(refusal([] { json_array_elements("{}"); }), (std::pair<std::string, size_t>{"expected '['", 0}));
  EXPECT_EQ(refusal([] { json_array_elements("[1] 2"); }), (std::pair<std::string, size_t>{"text after the array", 4}));
  EXPECT_EQ(refusal([] { json_array_elements("[1 2]"); }),
            (std::pair<std::string, size_t>{"expected ',' or ']' after an array's element", 3}));
}

}  // namespace
}  // namespace lrkit
