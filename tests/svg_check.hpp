// A small XML well-formedness checker for the SVG the plots write, so tests can
// parse a plot back: one root <svg>, tags balanced and properly nested,
// attributes quoted and not repeated, '<' and '&' in text only as entities.
// It records every element with its attributes for counting (e.g. the bars,
// <rect class="bar">). Not a validator of SVG itself.
#pragma once
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace svg_check {

struct Element {
  std::string name;
  std::map<std::string, std::string> attrs;
  std::string attr(const std::string& key) const {
    auto it = attrs.find(key);
    return it == attrs.end() ? std::string() : it->second;
  }
};

struct Document {
  std::string error;  // empty: well-formed
  std::vector<Element> elements;  // in document order, the root first
  bool ok() const { return error.empty(); }
  // Elements named `name`, and with class `cls` when given.
  std::size_t count(const std::string& name, const std::string& cls = "") const {
    std::size_t n = 0;
    for (const Element& e : elements) n += e.name == name && (cls.empty() || e.attr("class") == cls);
    return n;
  }
  std::vector<const Element*> all(const std::string& name, const std::string& cls = "") const {
    std::vector<const Element*> out;
    for (const Element& e : elements)
      if (e.name == name && (cls.empty() || e.attr("class") == cls)) out.push_back(&e);
    return out;
  }
};

class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}

  Document parse() {
    try {
      if (s_.compare(0, 5, "<?xml") == 0) skip_past("?>");
      std::vector<std::string> open;
      bool root_seen = false;
      while (i_ < s_.size()) {
        if (s_[i_] != '<') {
          text_until_tag(open.empty());
          continue;
        }
        if (s_.compare(i_, 4, "<!--") == 0) {
          skip_past("-->");
        } else if (s_.compare(i_, 2, "</") == 0) {
          i_ += 2;
          std::string name = read_name();
          ws();
          expect('>');
          if (open.empty() || open.back() != name) fail("</" + name + "> closes " + (open.empty() ? "nothing" : "<" + open.back() + ">"));
          open.pop_back();
        } else {
          ++i_;
          if (open.empty() && root_seen) fail("a second root element");
          Element e;
          e.name = read_name();
          bool self_closing = attributes(e);
          if (open.empty() && e.name != "svg") fail("the root is <" + e.name + ">, not <svg>");
          root_seen = true;
          doc_.elements.push_back(e);
          if (!self_closing) open.push_back(e.name);
        }
      }
      if (!open.empty()) fail("<" + open.back() + "> is never closed");
      if (!root_seen) fail("no root element");
    } catch (const std::string& why) {
      doc_.error = why + " (at byte " + std::to_string(i_) + ")";
    }
    return doc_;
  }

 private:
  [[noreturn]] void fail(const std::string& why) { throw why; }
  void ws() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  void expect(char c) {
    if (i_ >= s_.size() || s_[i_] != c) fail(std::string("expected '") + c + "'");
    ++i_;
  }
  void skip_past(const char* end) {
    std::size_t at = s_.find(end, i_);
    if (at == std::string::npos) fail(std::string("unterminated, no ") + end);
    i_ = at + std::string(end).size();
  }
  static bool name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' || c == '.';
  }
  std::string read_name() {
    std::size_t b = i_;
    while (i_ < s_.size() && name_char(s_[i_])) ++i_;
    if (b == i_) fail("expected a name");
    return s_.substr(b, i_ - b);
  }
  // Character data or an attribute value: '&' must start an entity.
  void check_entities(const std::string& text) {
    for (std::size_t k = 0; k < text.size(); ++k) {
      if (text[k] == '<') fail("a raw '<' in text");
      if (text[k] != '&') continue;
      std::size_t semi = text.find(';', k);
      std::string ent = semi == std::string::npos ? "" : text.substr(k + 1, semi - k - 1);
      static const char* const known[] = {"amp", "lt", "gt", "quot", "apos"};
      bool ok = ent.size() > 1 && ent[0] == '#';
      for (const char* n : known) ok = ok || ent == n;
      if (!ok) fail("a raw '&' in text");
    }
  }
  void text_until_tag(bool outside_root) {
    std::size_t end = s_.find('<', i_);
    if (end == std::string::npos) end = s_.size();
    std::string text = s_.substr(i_, end - i_);
    if (outside_root)
      for (char c : text)
        if (!std::isspace(static_cast<unsigned char>(c))) fail("text outside the root element");
    check_entities(text);
    i_ = end;
  }
  // Reads attributes up to '>' or '/>'; returns true for '/>'.
  bool attributes(Element& e) {
    while (true) {
      std::size_t before = i_;
      ws();
      if (i_ >= s_.size()) fail("unterminated tag <" + e.name);
      if (s_[i_] == '>') return ++i_, false;
      if (s_.compare(i_, 2, "/>") == 0) return i_ += 2, true;
      if (i_ == before) fail("attributes must be separated by space");
      std::string key = read_name();
      ws();
      expect('=');
      ws();
      if (i_ >= s_.size() || (s_[i_] != '"' && s_[i_] != '\'')) fail("unquoted attribute " + key);
      char q = s_[i_++];
      std::size_t end = s_.find(q, i_);
      if (end == std::string::npos) fail("unterminated attribute " + key);
      std::string value = s_.substr(i_, end - i_);
      check_entities(value);
      if (e.attrs.count(key)) fail("attribute " + key + " repeated");
      e.attrs[key] = value;
      i_ = end + 1;
    }
  }

  const std::string& s_;
  std::size_t i_ = 0;
  Document doc_;
};

inline Document check(const std::string& svg) { return Parser(svg).parse(); }

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace svg_check
