# embed.cmake — writes OUT, a C file that defines NAME[] as the bytes of
# IN and a NUL, so the binary carries the file (toolgate's OpenCode plugin,
# which `toolgate hook install opencode` writes out):
#   cmake -DIN=file -DOUT=file.c -DNAME=symbol -DHEADER=kit/x.h -P embed.cmake
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){16})" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}" "/* generated from ${IN} by cmake/embed.cmake */\n"
  "#include \"${HEADER}\"\n"
  "const char ${NAME}[] = {\n${bytes}0x00};\n")
