// gpuprof/terminal_text.hpp: text from files and command lines made safe to
// show on a terminal. Every table, report line and error message that
// can carry such text goes through terminal_safe(), so that a scope name, a
// JSON key or a file name cannot retitle the window, clear the screen or
// reorder what the user reads.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

#include "config.hpp"

GPUPROF_NAMESPACE_BEGIN

// Length of the well-formed UTF-8 sequence at text[at], 0 if it is not one
// (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
inline std::size_t utf8_sequence_length(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  std::size_t length = 0;
  unsigned char second_low = 0x80, second_high = 0xBF;  // range allowed for the 2nd byte
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) length = 2;
  else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) second_low = 0xA0;   // overlong
    if (lead == 0xED) second_high = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) second_low = 0x90;   // overlong
    if (lead == 0xF4) second_high = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (at + length > text.size()) return 0;
  if (byte(at + 1) < second_low || byte(at + 1) > second_high) return 0;
  for (std::size_t i = 2; i < length; ++i)
    if (byte(at + i) < 0x80 || byte(at + i) > 0xBF) return 0;
  return length;
}

// The code point of a well-formed sequence of `length` bytes at text[at].
inline char32_t utf8_code_point(std::string_view text, std::size_t at, std::size_t length) {
  const auto byte = [&](std::size_t i) { return static_cast<char32_t>(static_cast<unsigned char>(text[i])); };
  if (length == 1) return byte(at);
  char32_t code = byte(at) & (0x7F >> length);
  for (std::size_t i = 1; i < length; ++i) code = (code << 6) | (byte(at + i) & 0x3F);
  return code;
}

// Code points a terminal acts on rather than shows: C0, DEL, C1, and the
// bidirectional controls (U+202E turns "exe.txt" into "txt.exe" on screen).
inline bool terminal_control(char32_t code) {
  return code < 0x20 || (code >= 0x7F && code < 0xA0) || code == 0x61C || code == 0x200E || code == 0x200F ||
         (code >= 0x202A && code <= 0x202E) || (code >= 0x2066 && code <= 0x2069);
}

// Text safe to print on a terminal: control characters become visible
// escapes ("\x1b" for a byte below 0x80, "\u009b", "\u202e" above), and so
// does every byte that is not part of valid UTF-8 ("\xff"). Printable text,
// backslashes included, stays as it is, so escaping twice changes nothing.
inline std::string terminal_safe(std::string_view text) {
  static const char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  const auto escape = [&](const char* prefix, char32_t code, int digits) {
    out += prefix;
    for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4) out += hex[(code >> shift) & 15];
  };
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t length = utf8_sequence_length(text, at);
    const char32_t code = length ? utf8_code_point(text, at, length) : 0;
    if (length == 0 || (length == 1 && terminal_control(code))) {
      escape("\\x", static_cast<unsigned char>(text[at]), 2);
      ++at;
      continue;
    }
    if (terminal_control(code)) escape("\\u", code, 4);
    else out.append(text.substr(at, length));
    at += length;
  }
  return out;
}

GPUPROF_NAMESPACE_END
