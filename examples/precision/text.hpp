// text.hpp: column padding for the demos' tables, which contain UTF-8
// symbols (→, ², −) that std::setw would count by bytes.
#pragma once
#include <cstddef>
#include <string>

namespace precision {

// `text` followed by spaces up to `width` characters (code points).
inline std::string padded(const std::string& text, std::size_t width) {
  std::size_t characters = 0;
  for (char byte : text)
    if ((static_cast<unsigned char>(byte) & 0xC0) != 0x80) ++characters;  // not a continuation byte
  return characters >= width ? text + ' ' : text + std::string(width - characters, ' ');
}

}  // namespace precision
