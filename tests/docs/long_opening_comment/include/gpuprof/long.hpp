// long.hpp: an opening comment of 21 lines of prose around an example.
//
// ```cpp
// int example();
// ```
// prose line 2
// prose line 3
// prose line 4
// prose line 5
// prose line 6
// prose line 7
// prose line 8
// prose line 9
// prose line 10
// prose line 11
// prose line 12
// prose line 13
// prose line 14
// prose line 15
// prose line 16
// prose line 17
// prose line 18
// prose line 19
// prose line 20
#pragma once
