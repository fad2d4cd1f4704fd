// Command-line entry: `kube-conflict-hints check ...`. Filled in with the engine (issue 7).
process.stderr.write('kube-conflict-hints: the command-line check is not available in this build yet\n');
process.exit(2);
