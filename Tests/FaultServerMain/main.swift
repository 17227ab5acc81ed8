// payservice's stdio server with one extra method, `test.trap`, that ends the process with a
// Swift runtime trap: what an arithmetic overflow or a failed precondition does. The end-to-end
// tests run it to prove that answers of work already committed are written before a later line's
// trap (`CommittedAnswerTests`). It is a test program; payservice itself has no such method.
//
//   payservice-fault-server CONFIG DATABASE
import Foundation
import PayServiceCore

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
  FileHandle.standardError.write(Data("usage: payservice-fault-server CONFIG DATABASE\n".utf8))
  exit(2)
}
do {
  let config = try ConfigLoader.load(path: arguments[1])
  let store = try SQLiteStore(path: arguments[2])
  try store.seedStock(config.catalog)
  let context = ServiceContext(config: config, store: store, clock: ServiceClock(pinned: nil))
  var methods = MethodTable.payservice(backOffice: true)
  methods.register(
    "test.trap",
    MethodTable.Entry(call: { _, _, _, _ in
      // An Int overflow, as an unchecked sum of input would make: 1 is known only at run time.
      let one = arguments.count - 2
      return Int.max + one == 0 ? nil : nil
    }))
  let log = RequestLog(level: .quiet)
  let handler = RequestHandler(context: context, methods: methods, log: log)
  let server = Server(handler: handler, input: STDIN_FILENO, output: STDOUT_FILENO, maxLineBytes: 1 << 20, log: log)
  _ = server.run()
} catch {
  FileHandle.standardError.write(Data("payservice-fault-server: \(error)\n".utf8))
  exit(2)
}
