// The fuzz harness, with two targets (`FuzzTarget`): `requests` answers each line in process on
// stores opened once (thousands of inputs a second); `stdin` serves the input through a whole
// `Server` on a fresh store (framing, line limits and pipelining too, a few hundred a second).
//
// Built normally (`swift build`), it replays files: `payservice-fuzz [--target NAME] FILE|DIR ...`
// checks each file with the named target (both when none is named) and exits 1 when any file
// violates an oracle; `payservice-fuzz --mutate SEED FILE` prints the structure-aware mutation that
// seed makes of FILE. Built with libFuzzer (`Fuzz/run.sh`, which passes `-sanitize=fuzzer -DFUZZING`),
// it is a coverage-guided fuzzer of the target named by PAYSERVICE_FUZZ_TARGET (default
// `requests`), whose arguments are libFuzzer's (a corpus directory, -max_total_time=..., ...).
import Foundation
import PayServiceCore
import PayServiceFuzzSupport

func fail(_ message: String) -> Never {
  FileHandle.standardError.write(Data("payservice-fuzz: \(message)\n".utf8))
  exit(2)
}

#if FUZZING
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
  _ argc: UnsafeMutablePointer<CInt>,
  _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
  _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

let name = ProcessInfo.processInfo.environment["PAYSERVICE_FUZZ_TARGET"] ?? FuzzTarget.requests.rawValue
guard let target = FuzzTarget(rawValue: name) else { fail("no target \(name); targets: \(FuzzTarget.names)") }
fuzzing = FuzzHarness(target)
var argc = CommandLine.argc
var argv = CommandLine.unsafeArgv
exit(
  LLVMFuzzerRunDriver(&argc, &argv) { data, size in
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    if let problem = fuzzing.check(bytes) {
      FileHandle.standardError.write(Data("payservice-fuzz: input: \(problem)\n".utf8))
      abort()
    }
    return 0
  })
#else
var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--mutate" {
  guard arguments.count == 3, let seed = UInt32(arguments[1]), let bytes = FileManager.default.contents(atPath: arguments[2])
  else { fail("usage: payservice-fuzz --mutate SEED FILE") }
  let mutated = FuzzHarness(.requests).mutate(Array(bytes), maxSize: 4096, seed: seed)
  FileHandle.standardOutput.write(Data(mutated ?? []))
  exit(mutated == nil ? 1 : 0)
}
var targets = FuzzTarget.allCases
if let environment = ProcessInfo.processInfo.environment["PAYSERVICE_FUZZ_TARGET"] {
  guard let target = FuzzTarget(rawValue: environment) else { fail("no target \(environment); targets: \(FuzzTarget.names)") }
  targets = [target]
}
if arguments.first == "--target" {
  guard arguments.count >= 2, let target = FuzzTarget(rawValue: arguments[1]) else {
    fail("--target takes one of \(FuzzTarget.names)")
  }
  targets = [target]
  arguments.removeFirst(2)
}
var files: [String] = []
for argument in arguments {
  var isDirectory: ObjCBool = false
  guard FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory) else { fail("no such file \(argument)") }
  if isDirectory.boolValue {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: argument)) ?? []
    files += names.sorted().map { "\(argument)/\($0)" }
  } else {
    files.append(argument)
  }
}
var failed = 0
for target in targets {
  let harness = FuzzHarness(target)
  for file in files {
    let bytes = FileManager.default.contents(atPath: file).map(Array.init) ?? []
    if let problem = harness.check(bytes) {
      FileHandle.standardError.write(Data("payservice-fuzz: \(target.rawValue): \(file): \(problem)\n".utf8))
      failed += 1
    }
  }
}
print("payservice-fuzz: \(files.count) inputs, \(targets.map(\.rawValue).joined(separator: " and ")), \(failed) failed")
exit(failed == 0 ? 0 : 1)
#endif
