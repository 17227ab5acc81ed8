import Foundation
import PayServiceApplePay
import PayServiceCore
import PayServiceTestSupport
import Synchronization
import Testing

/// The Apple test server itself: registrations per merchant, its injected clock, and the
/// `apple-session-test-server` process.
@Suite("Apple session test server", .serialized)
struct AppleSessionTestServerTests {
  typealias Client = AppleMerchantSessionClientTests

  @Test("domains are registered per merchant")
  func registrationsPerMerchant() async throws {
    let server = try AppleSessionTestServer(
      registrations: ["merchant.com.example.a": ["a.example.com"], "merchant.com.example.b": ["b.example.com"]], now: { Client.now })
    defer { server.shutdown() }
    let identityB = try Client.identity(server, merchant: "merchant.com.example.b")
    let client = try Client.client(identityB, trust: server.serverCAPEM)
    defer { client.shutdown() }
    let endpoint = try Client.endpoint(server)
    let crossed = await client.startSession(endpoint, body: Client.body(merchant: "merchant.com.example.b", domain: "a.example.com"))
    #expect(Client.failure(crossed)?.code == .domainNotRegistered)
    let own = await client.startSession(endpoint, body: Client.body(merchant: "merchant.com.example.b", domain: "b.example.com"))
    guard case .session(.object(let session)) = own else {
      Issue.record("no session: \(own)")
      return
    }
    #expect(session["domainName"] == .string("b.example.com"))
    #expect(server.requests.map(\.certificateMerchant) == ["merchant.com.example.b", "merchant.com.example.b"])
    #expect(server.requests.map(\.status) == [400, 200])
  }

  @Test("sessions take their timestamps from the injected clock, read at each session")
  func clock() async throws {
    let clock = Mutex<Int64>(1_800_000_000)
    let server = try AppleSessionTestServer(registrations: [Client.merchant: [Client.domain]], now: { clock.withLock { $0 } })
    defer { server.shutdown() }
    let client = try Client.client(try Client.identity(server), trust: server.serverCAPEM)
    defer { client.shutdown() }
    let endpoint = try Client.endpoint(server)
    var stamps: [[JSONValue?]] = []
    for _ in 0..<2 {
      guard case .session(.object(let session)) = await client.startSession(endpoint, body: Client.body()) else {
        Issue.record("no session")
        return
      }
      stamps.append([session["epochTimestamp"], session["expiresAt"]])
      clock.withLock { $0 += 61 }
    }
    #expect(
      stamps == [
        [.number("1800000000000"), .number("1800003600000")], [.number("1800000061000"), .number("1800003661000")],
      ])
  }

  static var executable: String? {
    var directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    while directory.path != "/" {
      let candidate = directory.appendingPathComponent("apple-session-test-server").path
      if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
      directory = directory.deletingLastPathComponent()
    }
    return nil
  }

  /// Reads one line from a pipe (blocking).
  static func line(_ handle: FileHandle) -> String {
    var bytes: [UInt8] = []
    while true {
      let chunk = handle.readData(ofLength: 1)
      guard let byte = chunk.first else { break }
      if byte == UInt8(ascii: "\n") { break }
      bytes.append(byte)
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  @Test("the process: one JSON line with the files, sessions for them, commands on stdin, gone at EOF")
  func process() async throws {
    let binary = try #require(Self.executable, "apple-session-test-server is not built next to the tests")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = [
      "--merchant", Client.merchant, "--domain", "www.example.com", "--domain", Client.domain, "--now", "2026-11-21T12:00:00Z",
    ]
    let input = Pipe()
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    try process.run()
    defer { if process.isRunning { process.terminate() } }
    let announcement = try JSONParser.parse(Self.line(output.fileHandleForReading))
    guard case .object(let fields) = announcement, case .string(let url)? = fields["validationURL"],
      case .string(let additionalHost)? = fields["additionalHost"], case .string(let trustRoots)? = fields["trustRoots"],
      case .string(let certificate)? = fields["identityCertificate"], case .string(let key)? = fields["identityKey"]
    else {
      Issue.record("announcement: \(announcement)")
      return
    }
    #expect(fields.keys == ["validationURL", "additionalHost", "trustRoots", "identityCertificate", "identityKey"])
    #expect(url == "https://\(additionalHost)/paymentservices/startSession")
    let identity = try MerchantIdentity.load(
      certificatePEM: try String(contentsOfFile: certificate, encoding: .utf8), keyPEM: try String(contentsOfFile: key, encoding: .utf8),
      merchantIdentifier: Client.merchant)
    #expect(identity.certificate.publicKey.description == "RSA2048.PublicKey")
    let client = try Client.client(identity, trust: try String(contentsOfFile: trustRoots, encoding: .utf8))
    defer { client.shutdown() }
    let endpoint = try MerchantSessionURLPolicy(additionalHosts: [additionalHost]).check(url).get()
    guard case .session(.object(let session)) = await client.startSession(endpoint, body: Client.body()) else {
      Issue.record("no session")
      return
    }
    #expect(session["epochTimestamp"] == .number("1795262400000"))
    #expect(
      session["merchantSessionIdentifier"]
        == .string("SSH8D31AA494BCA3CAAC3F34DD9AFDDB019_A37BDC187C3502B7FBB682E643547C37A63A41F123AA44668E94BB97CFD24ADD"))

    let write = input.fileHandleForWriting
    write.write(Data("count\n".utf8))
    #expect(Self.line(output.fileHandleForReading) == #"{"sessions":1,"connections":1}"#)
    write.write(Data("fault 503\n".utf8))
    write.write(Data("fault nonsense\n".utf8))
    #expect(Self.line(output.fileHandleForReading) == #"{"error":"unknown fault; expected hang, reset, 500 or 503"}"#)
    #expect(Client.failure(await client.startSession(endpoint, body: Client.body()))?.httpStatus == 503)
    write.write(Data("count\n".utf8))
    #expect(Self.line(output.fileHandleForReading) == #"{"sessions":1,"connections":1}"#)

    try write.close()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    #expect(!FileManager.default.fileExists(atPath: certificate))
  }
}
