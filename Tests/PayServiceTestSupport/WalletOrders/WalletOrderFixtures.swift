import Foundation
import PayServiceCore

/// The test Order Type ID certificate for `order.com.example.coffee`, its key, the test WWDR
/// intermediate and root (Tests/PayServiceCoreTests/Fixtures/wallet-orders), and what checks a
/// package the way Wallet reads it: `scripts/wallet-order-check.py` (the zip's entries, the
/// manifest's hashes, the CMS signature with `openssl cms -verify` against the test root, and
/// `order.json` against Apple's documented keys).
public enum WalletOrderFixtures {
  public static let orderTypeIdentifier = "order.com.example.coffee"
  public static let folder = "Tests/PayServiceCoreTests/Fixtures/wallet-orders"

  public static func path(_ name: String) -> String { TestPaths.path("\(folder)/\(name)") }

  public static func text(_ name: String) throws -> String {
    try String(contentsOfFile: path(name), encoding: .utf8)
  }

  /// The test signer.
  public static func signer() throws -> WalletOrderSigner {
    try WalletOrderSigner.load(
      certificatePEM: text("order_type_certificate.pem"), keyPEM: text("order_type_key.pem"),
      intermediatePEM: text("wwdr_certificate.pem"), orderTypeIdentifier: orderTypeIdentifier)
  }

  /// What the checker says of `package`: its exit status and its output, the package's file
  /// named `order.order` there.
  public static func check(_ package: [UInt8]) throws -> (status: Int32, output: String) {
    let directory = TestPaths.temporaryDirectory()
    let file = directory.appendingPathComponent("order.order")
    try Data(package).write(to: file)
    let (status, output) = try run(
      "/usr/bin/env",
      [
        "python3", TestPaths.path("scripts/wallet-order-check.py"), file.path, "--ca", path("root_certificate.pem"),
        "--expect-order-type", orderTypeIdentifier,
      ])
    return (status, output.replacingOccurrences(of: file.path, with: "order.order"))
  }

  /// A file of the package (`order.json`, `manifest.json`), as text.
  public static func entry(_ name: String, of package: [UInt8]) throws -> String {
    let directory = TestPaths.temporaryDirectory()
    let file = directory.appendingPathComponent("order.order")
    try Data(package).write(to: file)
    let script = "import sys, zipfile; sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]).decode())"
    let (status, output) = try run("/usr/bin/env", ["python3", "-c", script, file.path, name])
    guard status == 0 else { throw CocoaError(.fileReadCorruptFile) }
    return output
  }

  static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
  }
}
