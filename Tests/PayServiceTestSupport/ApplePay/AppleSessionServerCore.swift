import Crypto
import Foundation
import NIOCore
import PayServiceCore
import Synchronization

/// What `AppleSessionTestServer` does with one request.
enum AppleSessionOutcome {
  case respond(status: Int, body: String)
  /// Never answers (the connection stays open until the client or the server closes it).
  case hang
  /// Resets the connection without answering.
  case reset
}

/// The state and the answers of `AppleSessionTestServer`, shared by its connections.
///
/// The answers follow Apple's Payment Session endpoint as documented and as merchants have seen
/// it answer:
/// - the request and the session object: "Requesting an Apple Pay payment session",
///   https://developer.apple.com/documentation/applepayontheweb/requesting-an-apple-pay-payment-session,
///   and sessions merchants posted (https://github.com/justeattakeaway/ApplePayJSSample/issues/74,
///   https://developer.apple.com/forums/topics/app-and-system-services/app-and-system-services-apple-pay):
///   `merchantIdentifier` and `pspId` are the upper-case hex SHA-256 of the identifier,
///   `signature` is hex DER (a CMS SignedData), `retries` 0;
/// - errors as a JSON object `{"statusMessage": "Payment Services Exception …", "statusCode": "400"}`:
///   TN3103 (https://developer.apple.com/documentation/technotes/tn3103-apple-pay-on-the-web-troubleshooting-guide)
///   for a 400 naming the merchant by its hash; "Invalid session request -- missing merchant
///   identifier" (https://developer.apple.com/forums/thread/49912); "merchantId=… not registered
///   for domain=…" for an unregistered domain (https://developer.apple.com/forums/profile/shirlychen,
///   "Which validation url should we use"); "… is not a registered merchant in WWDR and isn't
///   properly authorized via Mass Enablement, either." for an unknown merchant
///   (https://developer.apple.com/forums/thread/113866, where Apple sent it with 417; this server
///   answers 400, as TN3103 describes); "Invalid URI -- no content" with 404 for another path
///   (https://developer.apple.com/forums/thread/104920).
final class AppleSessionServerCore: Sendable {
  struct State {
    var faults: [AppleSessionTestServer.Fault] = []
    var sessionsIssued = 0
    var requests: [AppleSessionTestServer.RecordedRequest] = []
  }

  let state = Mutex(State())
  /// Merchant identifier → the domains registered (and verified) for it.
  let registrations: [String: [String]]
  let now: @Sendable () -> Int64

  static let paths: Set<String> = ["/paymentservices/startSession", "/paymentservices/paymentSession"]

  init(registrations: [String: [String]], now: @escaping @Sendable () -> Int64) {
    self.registrations = registrations
    self.now = now
  }


  /// The answer to one request; `certificateMerchant` is the UID of the client certificate.
  func answer(
    method: String, path: String, contentType: String?, body: [UInt8], certificateMerchant: String?
  ) -> AppleSessionOutcome {
    let index = state.withLock { state -> Int in
      state.requests.append(
        .init(
          method: method, path: path, contentType: contentType, body: String(decoding: body, as: UTF8.self),
          certificateMerchant: certificateMerchant, status: 0))
      return state.requests.count - 1
    }
    let outcome = decide(method: method, path: path, body: body, certificateMerchant: certificateMerchant)
    if case .respond(let status, _) = outcome {
      state.withLock { $0.requests[index].status = status }
    }
    return outcome
  }

  private func decide(method: String, path: String, body: [UInt8], certificateMerchant: String?) -> AppleSessionOutcome {
    if let fault = state.withLock({ $0.faults.isEmpty ? nil : $0.faults.removeFirst() }) {
      switch fault {
      case .hang: return .hang
      case .reset: return .reset
      case .internalServerError:
        return .respond(status: 500, body: Self.error("Payment Services Exception Internal Server Error", status: 500))
      case .serviceUnavailable:
        return .respond(status: 503, body: Self.error("Payment Services Exception Service Unavailable", status: 503))
      case .notJSON:
        return .respond(status: 200, body: "<html><body>Service Temporarily Unavailable</body></html>")
      }
    }
    guard method == "POST", Self.paths.contains(path) else {
      return .respond(status: 404, body: "Invalid URI -- no content")
    }
    func badRequest(_ message: String) -> AppleSessionOutcome {
      .respond(status: 400, body: Self.error("Payment Services Exception \(message)", status: 400))
    }
    guard case .object(let request)? = try? JSONParser.parse(body) else {
      return badRequest("Invalid session request -- malformed JSON")
    }
    func text(_ name: String) -> String? {
      if case .string(let value)? = request[name] { return value }
      return nil
    }
    guard let merchant = text("merchantIdentifier"), !merchant.isEmpty else {
      return badRequest("Invalid session request -- missing merchant identifier")
    }
    guard let certificateMerchant else {
      return badRequest("Invalid session request -- missing merchant identity certificate")
    }
    let certificateHash = Self.hashText(certificateMerchant)
    let requestHash = Self.hashText(merchant)
    guard merchant == certificateMerchant, let domains = registrations[merchant] else {
      return badRequest(
        """
        merchantId=\(certificateHash) unauthorized to process transactions on behalf of merchantId=\(requestHash) \
        reason="\(requestHash) is not a registered merchant in WWDR and isn't properly authorized via Mass Enablement, either."
        """)
    }
    guard let displayName = text("displayName"), !displayName.isEmpty else {
      return badRequest("Invalid session request -- missing display name")
    }
    guard displayName.count <= 64 else {
      return badRequest("Invalid session request -- display name longer than 64 characters")
    }
    guard let initiative = text("initiative") else {
      return badRequest("Invalid session request -- missing initiative")
    }
    guard initiative == "web" else {
      return badRequest("Invalid session request -- unsupported initiative \(initiative)")
    }
    guard let domain = text("initiativeContext"), !domain.isEmpty else {
      return badRequest("Invalid session request -- missing initiative context")
    }
    guard domains.contains(domain) else {
      return badRequest("merchantId=\(requestHash) not registered for domain=\(domain)")
    }
    let serial = state.withLock { state -> Int in
      state.sessionsIssued += 1
      return state.sessionsIssued
    }
    return .respond(
      status: 200,
      body: JSONWriter.string(
        Self.session(merchant: merchant, domain: domain, displayName: displayName, serial: serial, now: now())))
  }

  /// A merchant session as Apple shapes it, derived only from the merchant, the domain, the
  /// display name, the server's session counter and clock.
  static func session(merchant: String, domain: String, displayName: String, serial: Int, now: Int64) -> JSONValue {
    let seed = Array(SHA256.hash(data: Array("\(merchant)\n\(domain)\n\(serial)".utf8)))
    let second = Array(SHA256.hash(data: seed))
    let signatureDigest = Array(SHA512.hash(data: seed + Array(displayName.utf8)))
    let merchantHash = hashText(merchant)
    // A CMS SignedData's opening bytes (as Apple's signatures start), then a digest: opaque bytes.
    let signature = "308006092a864886f70d010702a0803080020101310d300b0609608648016503040201308006092a864886f70d0107010000a080"
      + hex(signatureDigest, upper: false)
    let sessionIdentifier = "SSH" + hex(seed[0..<16], upper: true) + "_" + hex(second, upper: true)
    return .object(
      JSONObject([
        ("epochTimestamp", .number(String(now * 1000))),
        ("expiresAt", .number(String((now + 3600) * 1000))),
        ("merchantSessionIdentifier", .string(sessionIdentifier)),
        ("nonce", .string(hex(second[0..<4], upper: false))),
        ("merchantIdentifier", .string(merchantHash)),
        ("domainName", .string(domain)),
        ("displayName", .string(displayName)),
        ("signature", .string(signature)),
        ("operationalAnalyticsIdentifier", .string("\(displayName):\(merchantHash)")),
        ("retries", .number("0")),
        ("pspId", .string(merchantHash)),
      ]))
  }

  /// `{"statusMessage": message, "statusCode": "status"}`
  static func error(_ message: String, status: Int) -> String {
    JSONWriter.string(
      JSONValue.object(JSONObject([("statusMessage", .string(message)), ("statusCode", .string(String(status)))])))
  }

  /// The upper-case hex SHA-256 of a merchant identifier, as Apple names merchants in answers.
  static func hashText(_ merchant: String) -> String {
    hex(SHA256.hash(data: Array(merchant.utf8)), upper: true)
  }

  static func hex(_ bytes: some Sequence<UInt8>, upper: Bool) -> String {
    let digits = Array((upper ? "0123456789ABCDEF" : "0123456789abcdef").utf8)
    var out: [UInt8] = []
    for byte in bytes {
      out.append(digits[Int(byte >> 4)])
      out.append(digits[Int(byte & 15)])
    }
    return String(decoding: out, as: UTF8.self)
  }
}
