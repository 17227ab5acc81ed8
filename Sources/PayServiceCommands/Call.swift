import ArgumentParser
import Foundation
import PayServiceCore

struct Call: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "call",
    abstract: "Send one request and print its result (exit 0), or its error object (exit 1).",
    discussion: """
      The result JSON goes to stdout. A JSON-RPC error prints its message on stderr and the error \
      object on stdout, and exits 1; an invalid config or store exits 2.
      """)

  @Argument(help: "The method, e.g. computeSummaryItems (--list prints them all).")
  var method: String?

  @Argument(help: "The params as JSON text, or - to read them from stdin. None: the request has no params.")
  var params: String?

  @OptionGroup var service: ServiceOptions

  @Flag(help: "Indent the JSON printed.")
  var pretty = false

  @Flag(help: "Print the method names, one per line, and exit.")
  var list = false

  func validate() throws {
    if !list && method == nil { throw ValidationError("give a METHOD (or --list to see them)") }
  }

  func run() throws {
    let responses = StdoutGuard.install()
    let code = answer(to: responses)
    Foundation.exit(code)
  }

  /// Answers and returns the exit status; the store is closed when this returns (a config or store
  /// that fails exits 2 before anything is open).
  private func answer(to responses: Int32) -> Int32 {
    if list {
      Call.write(
        MethodRegistry.methods(backOffice: service.backOffice).map { $0.name + "\n" }.joined(), to: responses)
      return 0
    }
    var paramsText = params
    if params == "-" {
      paramsText = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
    }
    return OneShotSession(service, backOffice: service.backOffice).answer(
      method: method ?? "", paramsText: paramsText, pretty: pretty, to: responses)
  }

  static func write(_ text: String, to fd: Int32) {
    var text = text
    text.withUTF8 { writeAll(UnsafeRawBufferPointer($0), to: fd) }
  }
}
