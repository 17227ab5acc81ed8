// The fuzz harness over the whole stdin path (framing, JSON, JSON-RPC, every method).
//
// Built normally (`swift build`), it replays files: `payservice-fuzz FILE|DIR ...` runs each file as
// stdin through `FuzzOracle` and exits 1 on the first violation. Built with libFuzzer
// (`Fuzz/run.sh`, which passes `-sanitize=fuzzer -DFUZZING`), it is a coverage-guided fuzzer whose
// arguments are libFuzzer's (a corpus directory, -max_total_time=..., ...).
import Foundation
import PayServiceCore
import PayServiceTestSupport

// Used from one thread: libFuzzer calls its entry point serially on the thread that started it,
// and the replay mode runs the files in a loop.
nonisolated(unsafe) let oracle = FuzzOracle()

func runOne(_ bytes: [UInt8], name: String) -> Bool {
  guard let problem = oracle.check(bytes) else { return true }
  FileHandle.standardError.write(Data("payservice-fuzz: \(name): \(problem)\n".utf8))
  return false
}

#if FUZZING
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
  _ argc: UnsafeMutablePointer<CInt>,
  _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
  _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

var argc = CommandLine.argc
var argv = CommandLine.unsafeArgv
exit(
  LLVMFuzzerRunDriver(&argc, &argv) { data, size in
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    if !runOne(bytes, name: "input") { abort() }
    return 0
  })
#else
var files: [String] = []
for argument in CommandLine.arguments.dropFirst() {
  var isDirectory: ObjCBool = false
  guard FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory) else {
    FileHandle.standardError.write(Data("payservice-fuzz: no such file \(argument)\n".utf8))
    exit(2)
  }
  if isDirectory.boolValue {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: argument)) ?? []
    files += names.sorted().map { "\(argument)/\($0)" }
  } else {
    files.append(argument)
  }
}
var failed = 0
for file in files {
  let bytes = FileManager.default.contents(atPath: file).map(Array.init) ?? []
  if !runOne(bytes, name: file) { failed += 1 }
}
print("payservice-fuzz: \(files.count) inputs, \(failed) failed")
exit(failed == 0 ? 0 : 1)
#endif
