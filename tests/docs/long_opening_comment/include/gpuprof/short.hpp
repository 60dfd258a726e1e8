// short.hpp: an opening comment of 2 lines.
// The second.
#pragma once
