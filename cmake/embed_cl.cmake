# Script mode: write OUT as a C file defining `const char wsisa_cl_<NAME>[]` from IN.
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n  " bytes "${bytes}")
file(WRITE ${OUT} "/* Generated from ${IN}; do not edit. */\n"
                  "const char wsisa_cl_${NAME}[] = {\n  ${bytes}0x00\n};\n")
