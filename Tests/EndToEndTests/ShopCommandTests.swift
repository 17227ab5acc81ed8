import Foundation
import PayServiceTestSupport
import Testing
import Synchronization

/// The one-shots of running a shop: `stock`, `erase`, `retention`, `check-config --database`, the
/// `health` call and `--log-timestamps`, through the built binary.
@Suite("Shop commands")
struct ShopCommandTests {
  static let now = "2026-11-21T12:00:00Z"

  static func common(_ database: String, config: String = TestConfig.yamlPath, now: String = now) -> [String] {
    ["--config", config, "--database", database, "--now", now]
  }

  @Test("stock adjust, set and list change and show the store's stock; check-config shows it beside the seed")
  func stock() throws {
    let database = TestPaths.temporaryDirectory().appendingPathComponent("store.sqlite").path
    let common = Self.common(database)
    let received = try PayserviceProcess.run(["stock", "adjust", "mug", "24", "--id", "po-1", "--reason", "Received PO-1"] + common)
    #expect(received.status == 0)
    #expect(
      received.stdoutText
        == #"{"status":"succeeded","adjustmentId":"po-1","sku":"mug","delta":24,"quantityBefore":100,"quantityOnHand":124,"at":"2026-11-21T12:00:00Z"}"#
        + "\n")
    // The same id again: the stored answer, nothing more added.
    let again = try PayserviceProcess.run(["stock", "adjust", "mug", "24", "--id", "po-1", "--reason", "Received PO-1"] + common)
    #expect(again.stdoutText == received.stdoutText)
    let broken = try PayserviceProcess.run(["stock", "adjust", "mug", "--id", "broken-1", "--reason", "Broken"] + common + ["--", "-4"])
    #expect(
      broken.stdoutText
        == #"{"status":"succeeded","adjustmentId":"broken-1","sku":"mug","delta":-4,"quantityBefore":124,"quantityOnHand":120,"at":"2026-11-21T12:00:00Z"}"#
        + "\n")
    let counted = try PayserviceProcess.run(["stock", "set", "notebook", "9", "--id", "count-1", "--reason", "Stocktake"] + common)
    #expect(
      counted.stdoutText
        == #"{"status":"succeeded","adjustmentId":"count-1","sku":"notebook","delta":6,"quantityBefore":3,"quantityOnHand":9,"at":"2026-11-21T12:00:00Z"}"#
        + "\n")
    let tooMany = try PayserviceProcess.run(["stock", "adjust", "notebook", "--id", "lost-1", "--reason", "Lost"] + common + ["--", "-10"])
    #expect(tooMany.status == 0)
    #expect(
      tooMany.stdoutText
        == #"{"status":"failed","failureCode":"insufficient_stock","message":"notebook has 9 on hand; at most 9 can be taken off."}"#
        + "\n")
    let list = try PayserviceProcess.run(["stock", "list"] + common)
    #expect(
      list.stdoutText
        == #"{"stock":[{"sku":"clock","name":"Clock","inCatalog":true,"configuredQuantity":10,"quantityOnHand":10,"sold":0},{"sku":"lamp","name":"Desk Lamp","inCatalog":true,"configuredQuantity":25,"quantityOnHand":25,"sold":0},{"sku":"mug","name":"Mug","inCatalog":true,"configuredQuantity":100,"quantityOnHand":120,"sold":0},{"sku":"notebook","name":"Notebook","inCatalog":true,"configuredQuantity":3,"quantityOnHand":9,"sold":0}]}"#
        + "\n")
    let check = try PayserviceProcess.run(["check-config", "--config", TestConfig.yamlPath, "--database", database])
    #expect(check.status == 0)
    #expect(check.stdoutText.contains("  notebook  Notebook  4.75  seed stock 3\n"))
    #expect(
      check.stdoutText.hasSuffix(
        """
        store      \(database): stock of 4 skus
          clock  on hand 10  sold 0  seed 10
          lamp  on hand 25  sold 0  seed 25
          mug  on hand 120  sold 0  seed 100
          notebook  on hand 9  sold 0  seed 3

        """))
    let missing = try PayserviceProcess.run(["check-config", "--config", TestConfig.yamlPath, "--database", database + ".none"])
    #expect(missing.status == 2)
    #expect(missing.stderr == "payservice: no store at \(database).none: give --database the store serve uses\n")
  }

  /// The golden store with a 30-day retention, and the erasure golden case's first orders on
  /// it: Ada's two orders, Grace's, and a declined payment, all at the golden clock.
  static func shopWithOrders() throws -> (config: String, database: String) {
    let directory = TestPaths.temporaryDirectory()
    let config = directory.appendingPathComponent("retain.yaml").path
    let base = try String(contentsOfFile: TestConfig.yamlPath, encoding: .utf8)
    try Data((base + "privacy:\n  retainPersonalDataDays: 30\n").utf8).write(to: URL(fileURLWithPath: config))
    let database = directory.appendingPathComponent("store.sqlite").path
    let requests = try String(
      contentsOf: GoldenTranscriptTests.goldenRoot.appendingPathComponent("erasure/requests.jsonl"), encoding: .utf8)
    let orders = requests.split(separator: "\n").prefix(8).map { $0 + "\n" }.joined()
    let placed = try PayserviceProcess.run(Self.common(database, config: config) + ["--quiet"], stdin: Data(orders.utf8))
    #expect(placed.status == 0)
    #expect(placed.stdoutText.components(separatedBy: #""status":"succeeded""#).count == 4)
    return (config, database)
  }

  @Test("erase takes one buyer's personal data; retention takes what is past privacy.retainPersonalDataDays")
  func eraseAndRetention() throws {
    let (config, database) = try Self.shopWithOrders()
    // A month less a day later nothing is past its 30 days.
    let early = try PayserviceProcess.run(["retention"] + Self.common(database, config: config, now: "2026-12-20T12:00:00Z"))
    #expect(early.status == 0)
    #expect(
      early.stdoutText
        == #"{"status":"succeeded","erasureId":"retention-2026-11-20T12:00:00Z-1","erasedAt":"2026-12-20T12:00:00Z","orders":[],"otherPayments":0,"more":false}"#
        + "\n")
    let grace = try PayserviceProcess.run(
      ["erase", "--email-address", "Grace@Example.com", "--erasure-id", "gdpr-7"]
        + Self.common(database, config: config, now: "2026-11-22T09:00:00Z"))
    #expect(grace.status == 0)
    #expect(grace.stdoutText.hasPrefix(#"{"status":"succeeded","erasureId":"gdpr-7","erasedAt":"2026-11-22T09:00:00Z","orders":["ord_"#))
    #expect(grace.stdoutText.hasSuffix(#""],"otherPayments":0,"more":false}"# + "\n"))
    // Past 30 days: Ada's two orders and her declined payment, one per batch, oldest first; Grace's
    // was erased already.
    let late = try PayserviceProcess.run(
      ["retention", "--batch", "1"] + Self.common(database, config: config, now: "2026-12-22T12:00:00Z"))
    #expect(late.status == 0)
    let batches = try late.stdoutText.split(separator: "\n").map {
      try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
    }
    #expect(batches.map { $0["erasureId"] as? String } == (1...3).map { "retention-2026-11-22T12:00:00Z-\($0)" })
    #expect(batches.map { ($0["orders"] as? [String])?.count } == [1, 1, 0])
    #expect(batches.map { $0["otherPayments"] as? Int } == [0, 0, 1])
    #expect(batches.map { $0["more"] as? Bool } == [true, true, false])
    // The same run again erases nothing twice: the first batch's answer is the stored one.
    let again = try PayserviceProcess.run(
      ["retention", "--batch", "1"] + Self.common(database, config: config, now: "2026-12-22T12:00:00Z"))
    #expect(again.stdoutText == late.stdoutText)
    // Nothing of a buyer is left in the store's text: orders, payments, the journal.
    let store = try Data(contentsOf: URL(fileURLWithPath: database))
      + ((try? Data(contentsOf: URL(fileURLWithPath: database + "-wal"))) ?? Data())
    for personal in ["Lovelace", "Hopper", "1 State St", "350 Fifth Avenue", "ada@example.com", "grace@example.com", "555 0100", "Albany"] {
      #expect(store.range(of: Data(personal.utf8)) == nil, "\(personal) is still in the store")
    }
    let unset = try PayserviceProcess.run(
      ["retention"] + Self.common(database))
    #expect(unset.status == 2)
    #expect(unset.stdoutText == "")
    #expect(unset.stderr.hasSuffix("sets no privacy.retainPersonalDataDays: nothing is past its retention\n"))
  }

  @Test("health answers with the config's digest; --log-timestamps stamps each log line")
  func healthAndTimestamps() throws {
    let database = TestPaths.temporaryDirectory().appendingPathComponent("store.sqlite").path
    let health = try PayserviceProcess.run(["call", "health"] + Self.common(database))
    #expect(health.status == 0)
    let digest = "sha256:" + (try Self.sha256sum(TestConfig.yamlPath))
    #expect(health.stdoutText == #"{"status":"ok","config":""# + digest + #""}"# + "\n")
    let served = try PayserviceProcess.run(
      ["--log-timestamps"] + Self.common(database), stdin: Data(#"{"jsonrpc":"2.0","id":1,"method":"health"}"#.utf8 + [0x0A]))
    let lines = served.stderr.split(separator: "\n").map(String.init)
    #expect(lines.count == 2)
    let stamp = #"^20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]\.[0-9]{3}Z payservice: "#
    for line in lines { #expect(line.range(of: stamp, options: .regularExpression) != nil, "\(line)") }
    #expect(lines[0].hasSuffix("payservice: config \(TestConfig.yamlPath) (\(digest)) took effect"))
    #expect(lines[1].contains(#"payservice: id=1 method="health" us="#))
  }

  /// The file's SHA-256 as coreutils' sha256sum prints it.
  static func sha256sum(_ path: String) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
    process.arguments = [path]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return String(text.prefix(64))
  }
}

/// Stock by hand under concurrency: processes taking units off one sku at once never take it below
/// zero, on either store.
@Suite("Stock adjustments across processes")
struct StockConcurrencyTests {
  @Test("eight processes each take one notebook off a stock of three: three succeed, five are refused", arguments: StoreBackend.available)
  func neverBelowZero(backend: StoreBackend) throws {
    let database = try backend.freshDatabase()
    let common = ShopCommandTests.common(database)
    // The store made (and seeded) before the race, so that the processes only adjust.
    let listed = try PayserviceProcess.run(["stock", "list", "notebook"] + common)
    #expect(listed.stdoutText.contains(#""quantityOnHand":3,"#))
    let outputs = Mutex<[String]>([])
    DispatchQueue.concurrentPerform(iterations: 8) { index in
      let result = try? PayserviceProcess.run(
        ["stock", "adjust", "notebook", "--id", "take-\(index)", "--reason", "Shelf count"] + common + ["--", "-1"])
      outputs.withLock { $0.append(result?.stdoutText ?? "no result") }
    }
    let all = outputs.withLock { $0 }
    #expect(all.filter { $0.hasPrefix(#"{"status":"succeeded""#) }.count == 3, "\(backend): \(all)")
    #expect(
      all.filter { $0 == #"{"status":"failed","failureCode":"insufficient_stock","message":"notebook has 0 on hand; at most 0 can be taken off."}"# + "\n" }
        .count == 5, "\(backend): \(all)")
    let after = try PayserviceProcess.run(["stock", "list", "notebook"] + common)
    let result = try JSONSerialization.jsonObject(with: after.stdout) as? [String: Any]
    let item = (result?["stock"] as? [[String: Any]])?.first
    #expect(item?["quantityOnHand"] as? Int == 0)
    #expect((item?["adjustments"] as? [[String: Any]])?.map { $0["quantityOnHand"] as? Int } == [0, 1, 2])
  }
}
