# cmake -DOUTPUT=FILE -P cmake/gpuprofEmbedHtmlAssets.cmake: writes the header
# that carries the HTML report's script and style (include/gpuprof/detail/
# html_page.js and html_page.css) as raw string literals. With -DCHECK=FILE
# instead: fails unless FILE is what it would write.
#
# Why a checked-in header rather than one generated at configure time: gpuprof
# is header-only and is used straight from include/ (a plain -I, an
# add_subdirectory, the installed tree), so every header must exist there
# without a build. The .js and .css files are the sources a person edits; the
# test gpuprof_html_assets_in_sync fails while the header differs from what
# this script makes of them, and the target gpuprof_html_assets rewrites it.
cmake_minimum_required(VERSION 3.25)  # policies for script mode
if(NOT OUTPUT AND NOT CHECK)
  message(FATAL_ERROR "usage: cmake {-DOUTPUT=FILE | -DCHECK=FILE} -P gpuprofEmbedHtmlAssets.cmake")
endif()
set(dir ${CMAKE_CURRENT_LIST_DIR}/../include/gpuprof/detail)
set(delimiter "gpuprof_asset")
set(functions "")
foreach(asset IN ITEMS "html_page_script;html_page.js" "html_page_style;html_page.css")
  list(GET asset 0 function)
  list(GET asset 1 file)
  file(READ ${dir}/${file} text)
  string(FIND "${text}" ")${delimiter}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${file} contains )${delimiter}\", which would end the raw string early")
  endif()
  string(APPEND functions "inline const char* ${function}() {\n  return R\"${delimiter}(${text})${delimiter}\";\n}\n\n")
endforeach()
string(STRIP "${functions}" functions)
set(header "// gpuprof/detail/html_page_assets.hpp: the HTML report's script and style,
// made from html_page.js and html_page.css by cmake/gpuprofEmbedHtmlAssets.cmake.
// Do not edit: edit those files, then `cmake --build BUILD --target gpuprof_html_assets`
// (the test gpuprof_html_assets_in_sync fails while this file is stale).
#pragma once
#include \"../config.hpp\"

GPUPROF_NAMESPACE_BEGIN

namespace detail {

${functions}

}  // namespace detail

GPUPROF_NAMESPACE_END
")
if(CHECK)
  file(READ ${CHECK} checked)
  if(NOT checked STREQUAL header)
    message(FATAL_ERROR "${CHECK} is stale: html_page.js or html_page.css changed since it was made; "
                        "run `cmake --build BUILD --target gpuprof_html_assets`")
  endif()
  message(STATUS "${CHECK} holds html_page.js and html_page.css as they are")
else()
  file(WRITE ${OUTPUT} "${header}")
endif()
