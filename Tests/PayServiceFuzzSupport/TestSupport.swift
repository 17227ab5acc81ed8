import Foundation
import PayServiceCore

/// Paths and helpers shared by the test targets.
public enum TestPaths {
  /// The package root, found from this file's location in the source tree.
  public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

  public static func path(_ relative: String) -> String {
    packageRoot.appendingPathComponent(relative).path
  }

  /// The `payservice` executable built next to the test bundle, or the one the environment
  /// variable PAYSERVICE_TEST_BINARY names (CI runs the crash matrix through the release build).
  public static var payserviceBinary: String {
    if let binary = ProcessInfo.processInfo.environment["PAYSERVICE_TEST_BINARY"], !binary.isEmpty {
      return binary.hasPrefix("/") ? binary : packageRoot.appendingPathComponent(binary).path
    }
    return executable("payservice")
  }

  /// An executable of this package built with the tests (a test server, say; PAYSERVICE_TEST_BINARY
  /// names only payservice itself).
  public static func executable(_ name: String) -> String {
    let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    var directory = executable.deletingLastPathComponent()
    // On Linux the test binary sits in .build/<triple>/debug/; on macOS inside an .xctest bundle.
    while directory.path != "/" {
      let candidate = directory.appendingPathComponent(name).path
      if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
      directory = directory.deletingLastPathComponent()
    }
    return packageRoot.appendingPathComponent(".build/debug/\(name)").path
  }

  /// A fresh temporary directory.
  public static func temporaryDirectory() -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("payservice-test-\(UUID().uuidString)")
    try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
  }
}

/// The small store most unit tests price against (the same file the golden transcripts use).
public enum TestConfig {
  public static let yamlPath = TestPaths.path("Tests/EndToEndTests/Golden/config.yaml")

  public static func load() -> Config {
    try! ConfigLoader.load(path: yamlPath)
  }

  public static func yaml() -> String {
    try! String(contentsOfFile: yamlPath, encoding: .utf8)
  }

  /// The store with coupons, card adjustments, freeOver and delivery windows (Golden/discounts).
  public static let discountsPath = TestPaths.path("Tests/EndToEndTests/Golden/discounts/config.yaml")

  public static func discounts() -> Config {
    try! ConfigLoader.load(path: discountsPath)
  }

  /// `config` serving Wallet orders' web service, signed with the test Order Type ID certificate
  /// (Tests/PayServiceCoreTests/Fixtures/wallet-orders), without pushes.
  public static func servingWalletOrders(_ config: Config) -> Config {
    func text(_ name: String) -> String {
      try! String(contentsOfFile: TestPaths.path("Tests/PayServiceCoreTests/Fixtures/wallet-orders/\(name)"), encoding: .utf8)
    }
    var config = config
    let signer = try! WalletOrderSigner.load(
      certificatePEM: text("order_type_certificate.pem"), keyPEM: text("order_type_key.pem"),
      intermediatePEM: text("wwdr_certificate.pem"), orderTypeIdentifier: "order.com.example.coffee")
    config.walletOrders = WalletOrders(
      orderTypeIdentifier: "order.com.example.coffee", webServiceURL: "https://coffee.example.com/wallet-orders",
      package: WalletOrderPackageSettings(
        merchantIdentifier: config.merchant.identifier, displayName: config.merchant.displayName,
        merchantURL: "https://coffee.example.com", orderManagementURL: "https://coffee.example.com/orders/{orderId}",
        signer: signer))
    return config
  }

  /// The identifier key of every store the tests create (in process, and in the processes they
  /// start, through `PAYSERVICE_ID_KEY`), so that identifiers repeat from run to run.
  public static let identifierKey = IdentifierKey.transcript

  /// The pinned clock of the tests: 2026-11-21T12:00:00Z.
  public static let now: Int64 = RFC3339.parse("2026-11-21T12:00:00Z")!

  public static func context(
    config: Config = load(), storePath: String = ":memory:", now: Int64 = now,
    busyTimeout: TimeInterval = SQLiteStore.busyTimeout, backOffice: Bool = false
  ) throws -> ServiceContext {
    let store = try SQLiteStore(path: storePath, busyTimeout: busyTimeout, newIdentifierKey: identifierKey)
    try store.seedStock(config.catalog)
    return ServiceContext(config: config, store: store, clock: ServiceClock(pinned: now), backOffice: backOffice)
  }

  /// A handler answering payservice's methods; `backOffice` adds the back-office ones (`--back-office`).
  public static func handler(_ context: ServiceContext, backOffice: Bool = false) -> RequestHandler {
    RequestHandler(context: context, methods: .payservice(backOffice: backOffice), log: RequestLog(level: .quiet))
  }
}

extension RequestHandler {
  /// Sends one request line and returns the response line as a string (nil: no response).
  public func respond(_ line: String) -> String? {
    handle(line: Array(line.utf8)).map { String(decoding: $0, as: UTF8.self) }
  }

  /// Calls `method` with `params` (JSON text) and returns the parsed response.
  public func call(_ method: String, _ params: String = "{}", id: Int = 1) -> JSONValue {
    let line = #"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":\#(params)}"#
    return try! JSONParser.parse(respond(line) ?? "null")
  }
}

extension JSONValue {
  /// Member lookup for tests: `response["result"]?["status"]`.
  public subscript(key: String) -> JSONValue? {
    if case .object(let object) = self { return object[key] }
    return nil
  }

  public subscript(index: Int) -> JSONValue? {
    if case .array(let elements) = self, elements.indices.contains(index) { return elements[index] }
    return nil
  }

  public var stringValue: String? {
    if case .string(let text) = self { return text }
    return nil
  }

  public var arrayValue: [JSONValue]? {
    if case .array(let elements) = self { return elements }
    return nil
  }

  public var compact: String { JSONWriter.string(self) }
}

/// Runs the built `payservice` binary to completion with the given stdin.
public struct ProcessResult {
  public var status: Int32
  public var stdout: Data
  public var stderr: String
  public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
}

public enum PayserviceProcess {
  public static func run(
    _ arguments: [String], stdin: Data = Data(), currentDirectory: URL? = nil, environment: [String: String]? = nil
  ) throws -> ProcessResult {
    let directory = TestPaths.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let inPath = directory.appendingPathComponent("stdin")
    let outPath = directory.appendingPathComponent("stdout")
    let errPath = directory.appendingPathComponent("stderr")
    try stdin.write(to: inPath)
    _ = FileManager.default.createFile(atPath: outPath.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errPath.path, contents: nil)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: TestPaths.payserviceBinary)
    process.arguments = arguments
    if let currentDirectory { process.currentDirectoryURL = currentDirectory }
    // The tests' identifier key for a store the process creates, unless the test says otherwise.
    var environment = environment ?? ProcessInfo.processInfo.environment
    if environment[IdentifierKey.pinVariable] == nil { environment[IdentifierKey.pinVariable] = TestConfig.identifierKey.hex }
    process.environment = environment
    process.standardInput = try FileHandle(forReadingFrom: inPath)
    process.standardOutput = try FileHandle(forWritingTo: outPath)
    process.standardError = try FileHandle(forWritingTo: errPath)
    try process.run()
    process.waitUntilExit()
    return ProcessResult(
      status: process.terminationStatus, stdout: try Data(contentsOf: outPath),
      stderr: String(decoding: try Data(contentsOf: errPath), as: UTF8.self))
  }
}
