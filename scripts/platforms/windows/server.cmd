@node "%~dp0server.mjs" %*
