import Crypto
import Foundation
import SwiftASN1
import X509

// Merchant validation for Apple Pay on the Web: the page's `onvalidatemerchant` hands the merchant's
// server a `validationURL`; the server POSTs `{"merchantIdentifier", "displayName", "initiative":
// "web", "initiativeContext": <domain>}` to it over mutual TLS with the Merchant Identity
// Certificate and gives Apple's answer (an opaque merchant session object) back to the page.
//
// - Requesting an Apple Pay payment session:
//   https://developer.apple.com/documentation/applepayontheweb/requesting-an-apple-pay-payment-session
// - Setting up your server (TLS 1.2+, SNI, port 443, and the strict allow list of gateway hosts):
//   https://developer.apple.com/documentation/applepayontheweb/setting-up-your-server
// - Configuring your environment (the Merchant Identity Certificate authenticates these sessions):
//   https://developer.apple.com/documentation/apple_pay_on_the_web/configuring_your_environment
// - TN3103, Apple Pay on the Web troubleshooting guide (a 400 "Payment Services Exception" names
//   the merchant by the SHA-256 of its identifier):
//   https://developer.apple.com/documentation/technotes/tn3103-apple-pay-on-the-web-troubleshooting-guide

/// The hosts Apple publishes for merchant validation: the only hosts a `validationURL` may name
/// (besides a merchant's own `additionalHosts`), on port 443.
///
/// From "Setting up your server" (https://developer.apple.com/documentation/applepayontheweb/setting-up-your-server):
/// the global and China gateways, the sandbox gateways, and the listing "Apple Pay IP addresses and
/// domain names for merchant validation" (the nc/pr pods and their -dr twins, the Shanghai and
/// Tianjin pods). Apple says to allow exactly these and nothing else.
public enum MerchantSessionHosts {
  public static let apple: [String] =
    [
      "apple-pay-gateway.apple.com",
      "cn-apple-pay-gateway.apple.com",
      // Sandbox (development) gateways.
      "apple-pay-gateway-cert.apple.com",
      "cn-apple-pay-gateway-cert.apple.com",
    ]
    + ["nc", "pr"].flatMap { site in
      (1...5).flatMap { pod in ["apple-pay-gateway-\(site)-pod\(pod).apple.com", "apple-pay-gateway-\(site)-pod\(pod)-dr.apple.com"] }
    }
    + ["sh", "tj"].flatMap { site in
      (1...3).flatMap { pod in ["cn-apple-pay-gateway-\(site)-pod\(pod).apple.com", "cn-apple-pay-gateway-\(site)-pod\(pod)-dr.apple.com"] }
    }
}

/// Where a checked `validationURL` points: a lower-case host, the port (443 unless an additional
/// host names another) and the path.
public struct MerchantSessionEndpoint: Sendable, Equatable {
  public let host: String
  public let port: Int
  public let path: String

  /// The URL rebuilt from the checked parts (the port only when it is not 443).
  public var url: String {
    port == 443 ? "https://\(host)\(path)" : "https://\(host):\(port)\(path)"
  }
}

/// Why a `validationURL` was refused, in words that say what would be accepted.
public struct MerchantSessionURLProblem: Error, Equatable, Sendable {
  public let message: String

  public init(message: String) {
    self.message = message
  }
}

/// Which `validationURL`s the server will POST to: `https` to one of Apple's gateway hosts on port
/// 443, or to one of the merchant's `additionalHosts` (a test server or a proxy, from its own
/// config file) exactly as listed.
///
/// The URL comes from a web page, so it is parsed by hand and strictly: anything a lenient parser
/// could read two ways (userinfo, IP literals in any notation, percent-escapes, backslashes,
/// trailing dots, whitespace, non-ASCII) is refused rather than interpreted. A refused URL never
/// leads to a connection.
public struct MerchantSessionURLPolicy: Sendable {
  /// `host` or `host:port` entries; an entry without a port means 443.
  public let additionalHosts: [String]
  /// The additional hosts parsed, lower-cased; malformed entries are left out (they never match).
  let additional: [(host: String, port: Int)]

  /// The longest `validationURL` considered.
  public static let maximumLength = 2048

  public init(additionalHosts: [String]) {
    self.additionalHosts = additionalHosts
    additional = additionalHosts.compactMap { entry in
      guard case .success(let parsed) = Self.parseAuthority(entry) else { return nil }
      return (parsed.host, parsed.port ?? 443)
    }
  }

  /// Why an `additionalHosts` entry is unusable (for a config check), or nil when it is a valid
  /// `host` or `host:port`.
  public static func problem(additionalHost entry: String) -> String? {
    if case .failure(let problem) = parseAuthority(entry) { return problem.message }
    return nil
  }

  /// The endpoint `validationURL` names when it may be used, or why not.
  public func check(_ validationURL: String) -> Result<MerchantSessionEndpoint, MerchantSessionURLProblem> {
    func refuse(_ message: String) -> Result<MerchantSessionEndpoint, MerchantSessionURLProblem> {
      .failure(MerchantSessionURLProblem(message: message))
    }
    let expected = "expected the validationURL Apple Pay JS gave onvalidatemerchant, such as https://apple-pay-gateway.apple.com/paymentservices/paymentSession"
    let bytes = Array(validationURL.utf8)
    if bytes.isEmpty { return refuse("is empty; \(expected)") }
    if bytes.count > Self.maximumLength {
      return refuse("is \(bytes.count) bytes long, more than \(Self.maximumLength); \(expected)")
    }
    if bytes.contains(where: { $0 <= 0x20 || $0 >= 0x7F }) {
      return refuse("contains whitespace, a control character or non-ASCII text; \(expected)")
    }
    if bytes.contains(UInt8(ascii: "\\")) { return refuse("contains a backslash; \(expected)") }
    if bytes.contains(UInt8(ascii: "%")) { return refuse("contains a percent-escape; \(expected)") }
    if bytes.contains(UInt8(ascii: "?")) { return refuse("has a query (?…); \(expected)") }
    if bytes.contains(UInt8(ascii: "#")) { return refuse("has a fragment (#…); \(expected)") }

    guard let separator = validationURL.range(of: "://") else {
      return refuse("is not an absolute https URL; \(expected)")
    }
    let scheme = validationURL[..<separator.lowerBound]
    guard scheme.lowercased() == "https" else {
      return refuse("uses \(scheme.isEmpty ? "no scheme" : "scheme \(scheme)"); only https is allowed; \(expected)")
    }
    let rest = validationURL[separator.upperBound...]
    let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
    let authority = String(rest[..<authorityEnd])
    let path = String(rest[authorityEnd...])

    let parsed: (host: String, port: Int?)
    switch Self.parseAuthority(authority) {
    case .success(let value): parsed = value
    case .failure(let problem): return .failure(problem)
    }
    guard path.hasPrefix("/") else {
      return refuse("has no path; \(expected)")
    }

    if MerchantSessionHosts.apple.contains(parsed.host) {
      if let port = parsed.port, port != 443 {
        return refuse("names port \(port) of \(parsed.host); Apple's gateways are reached on port 443 only")
      }
      return .success(MerchantSessionEndpoint(host: parsed.host, port: 443, path: path))
    }
    let port = parsed.port ?? 443
    let sameHost = additional.filter { $0.host == parsed.host }
    if sameHost.contains(where: { $0.port == port }) {
      return .success(MerchantSessionEndpoint(host: parsed.host, port: port, path: path))
    }
    if !sameHost.isEmpty {
      let listed = sameHost.map { "\($0.host):\($0.port)" }.joined(separator: ", ")
      return refuse("names port \(port) of \(parsed.host); the additional hosts allow \(listed)")
    }
    return refuse(
      """
      names host \(parsed.host), which is not an Apple Pay gateway for merchant validation (such as \
      apple-pay-gateway.apple.com, apple-pay-gateway-cert.apple.com or cn-apple-pay-gateway.apple.com, \
      see https://developer.apple.com/documentation/applepayontheweb/setting-up-your-server) nor one of \
      the additional hosts
      """)
  }

  /// `host` or `host:port` as a URL authority: a DNS name of letters, digits, `-` and `.` (no
  /// userinfo, no IP literal, no trailing dot), lower-cased, and a decimal port 1…65535.
  static func parseAuthority(_ authority: String) -> Result<(host: String, port: Int?), MerchantSessionURLProblem> {
    func refuse(_ message: String) -> Result<(host: String, port: Int?), MerchantSessionURLProblem> {
      .failure(MerchantSessionURLProblem(message: message))
    }
    let bytes = Array(authority.utf8)
    if bytes.isEmpty { return refuse("has no host; expected a DNS name such as apple-pay-gateway.apple.com") }
    if bytes.contains(where: { $0 <= 0x20 || $0 >= 0x7F }) {
      return refuse("has whitespace, a control character or non-ASCII text in its host")
    }
    if bytes.contains(UInt8(ascii: "@")) {
      return refuse("has userinfo (…@) before its host; a validation URL names only the gateway's host")
    }
    if bytes.contains(UInt8(ascii: "%")) { return refuse("has a percent-escape in its host; give the host as plain text") }
    if bytes.contains(UInt8(ascii: "\\")) { return refuse("has a backslash in its host") }
    if bytes.first == UInt8(ascii: "[") {
      return refuse("names an IP address ([…]); only DNS names such as apple-pay-gateway.apple.com are allowed")
    }

    var hostBytes = bytes[...]
    var port: Int?
    if let colon = bytes.lastIndex(of: UInt8(ascii: ":")) {
      hostBytes = bytes[..<colon]
      let digits = bytes[(colon + 1)...]
      guard !digits.isEmpty, digits.count <= 5, digits.allSatisfy({ (0x30...0x39).contains($0) }),
        let value = Int(String(decoding: digits, as: UTF8.self)), (1...65535).contains(value)
      else {
        return refuse("has a port that is not a number from 1 to 65535")
      }
      port = value
    }
    if hostBytes.isEmpty { return refuse("has no host; expected a DNS name such as apple-pay-gateway.apple.com") }
    if hostBytes.last == UInt8(ascii: ".") {
      return refuse("has a trailing dot in its host; give the host without it")
    }
    let allowed: (UInt8) -> Bool = { byte in
      (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
        || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
    }
    guard hostBytes.allSatisfy(allowed) else {
      return refuse("has a host with characters a DNS name does not have (letters, digits, - and . only)")
    }
    let labels = hostBytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
    guard labels.allSatisfy({ !$0.isEmpty && $0.count <= 63 }), hostBytes.count <= 253 else {
      return refuse("has a host with an empty or overlong label")
    }
    // An IPv4 address in any notation a URL parser accepts (127.0.0.1, 2130706433, 0x7f.1, 017.1):
    // WHATWG URL reads a host whose last label is a number as an address.
    if let last = labels.last, Self.isNumeric(last) {
      return refuse("names an IP address; only DNS names such as apple-pay-gateway.apple.com are allowed")
    }
    return .success((String(decoding: hostBytes, as: UTF8.self).lowercased(), port))
  }

  /// Decimal digits, or `0x` followed by hexadecimal digits (possibly none).
  static func isNumeric(_ label: ArraySlice<UInt8>) -> Bool {
    if label.allSatisfy({ (0x30...0x39).contains($0) }) { return true }
    guard label.count >= 2, label[label.startIndex] == UInt8(ascii: "0"),
      label[label.startIndex + 1] | 0x20 == UInt8(ascii: "x")
    else { return false }
    return label.dropFirst(2).allSatisfy { byte in
      (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte | 0x20)
    }
  }
}

// MARK: - Client

/// The HTTPS client the core asks for a merchant session (the `PayServiceApplePay` module provides
/// the real one, over mutual TLS with the merchant identity).
public protocol MerchantSessionClient: Sendable {
  /// POSTs `body` (JSON) to `endpoint` over mutual TLS; never throws: every failure is a reply.
  func startSession(_ endpoint: MerchantSessionEndpoint, body: [UInt8]) async -> MerchantSessionReply
  func shutdown()
}

/// What a merchant session request came to.
public enum MerchantSessionReply: Sendable, Equatable {
  /// Apple's merchant session, a JSON object, to hand to `completeMerchantValidation` unchanged.
  case session(JSONValue)
  case failed(MerchantSessionFailure)
}

/// Why no merchant session was obtained: a stable code and a message that names the cause and
/// what to do. Messages never hold key material or certificate text.
public struct MerchantSessionFailure: Sendable, Equatable, Error {
  public var code: Code
  public var message: String
  /// The HTTP status Apple answered, when it answered.
  public var httpStatus: Int?

  public init(code: Code, message: String, httpStatus: Int? = nil) {
    self.code = code
    self.message = message
    self.httpStatus = httpStatus
  }

  public enum Code: String, Sendable, CaseIterable {
    /// The merchant identity certificate has expired (checked before connecting, or Apple's TLS
    /// alert `certificate_expired`).
    case identityCertificateExpired = "identity_certificate_expired"
    /// Apple's gateway refused the client certificate during TLS (an alert such as `unknown_ca`,
    /// `bad_certificate` or `certificate_required`).
    case identityCertificateRejected = "identity_certificate_rejected"
    /// The gateway's own certificate did not verify against the trust roots.
    case serverNotTrusted = "server_not_trusted"
    /// Apple does not know the merchant identifier, or the certificate is another merchant's.
    case merchantUnknown = "merchant_unknown"
    /// The domain (`initiativeContext`) is not registered and verified for the merchant.
    case domainNotRegistered = "domain_not_registered"
    /// Any other HTTP status.
    case httpStatus = "http_status"
    /// No answer within the request timeout, or no connection within the connect timeout.
    case timeout
    /// No connection, or it was refused, reset or closed before the answer.
    case unreachable
    /// A 200 answer that is not a JSON object.
    case invalidResponse = "invalid_response"
  }
}

// MARK: - Merchant identity

/// The Merchant Identity Certificate Apple issued for a merchant identifier, with its private key:
/// the client certificate for merchant validation.
///
/// Built only by `load`, which checks at start-up that the PEM texts hold a certificate and a
/// matching RSA or EC key, and that the certificate is this merchant's: Apple puts the identifier
/// in the subject's UID and its hex SHA-256 in the extension 1.2.840.113635.100.6.32.
public struct MerchantIdentity: Sendable {
  public let merchantIdentifier: String
  /// The leaf certificate (the first of the chain).
  public let certificate: Certificate
  /// The chain as given, leaf first, one PEM certificate each (for NIOSSL).
  public let certificateChainPEM: [String]
  /// The private key, one PEM block (for NIOSSL).
  public let keyPEM: String
  /// The leaf's validity period, unix seconds (both ends inclusive).
  public let notValidBefore: Int64
  public let notValidAfter: Int64

  /// A problem with one of the two PEM texts: which config key it belongs to and what is wrong.
  public struct Problem: Error, Equatable, Sendable {
    /// `merchantIdentityCertificate` or `merchantIdentityKey`.
    public var key: String
    public var message: String
  }

  /// Where a moment falls in the certificate's validity.
  public enum Validity: Equatable, Sendable {
    case valid
    /// Valid, but expiring within 30 days: whole days left.
    case expiresSoon(days: Int)
    /// Expired at `since` (RFC 3339).
    case expired(since: String)
    /// Not valid before `until` (RFC 3339).
    case notYetValid(until: String)
  }

  /// Reads and cross-checks the PEM texts. `certificatePEM` may hold a chain (the leaf first) and
  /// either text may also hold the other's blocks (a "stacked" PEM from `openssl pkcs12 -nodes`
  /// serves for both): only certificates are read from the first and only a private key from the
  /// second.
  public static func load(certificatePEM: String, keyPEM: String, merchantIdentifier: String) throws(Problem) -> MerchantIdentity {
    let certificateKey = "merchantIdentityCertificate"
    let pair: CertificateKeyPair
    do {
      pair = try CertificateKeyPair.read(
        certificatePEM: certificatePEM, keyPEM: keyPEM, certificateKey: certificateKey,
        privateKeyKey: "merchantIdentityKey")
    } catch {
      throw Problem(key: error.key, message: error.message)
    }
    let (chain, certificateBlocks, privateKey, keyBlock) = (pair.chain, pair.certificateBlocks, pair.privateKey, pair.keyBlock)
    let leaf = chain[0]

    let expected = Array(SHA256.hash(data: Array(merchantIdentifier.utf8)))
    let userID = ApplePayMerchant.subjectAttribute(ApplePayMerchant.userIDAttribute, of: leaf)
    if let hash = ApplePayMerchant.merchantIdentifierHash(of: leaf) {
      guard hash == expected else {
        let owner = userID.map { "merchant identifier \($0)" } ?? "another merchant identifier"
        throw Problem(
          key: certificateKey,
          message: """
            belongs to \(owner) (extension \(ApplePayMerchant.merchantIdentifierExtension) is \(Hex.encode(hash))), \
            not to \(merchantIdentifier) (SHA-256 \(Hex.encode(expected))); use the Merchant Identity Certificate \
            Apple issued for \(merchantIdentifier)
            """)
      }
    } else if userID != merchantIdentifier {
      let message =
        if let userID {
          "belongs to merchant identifier \(userID) (subject UID), not to \(merchantIdentifier); use the Merchant Identity Certificate Apple issued for \(merchantIdentifier)"
        } else {
          """
          names no merchant identifier (neither a subject UID nor extension \
          \(ApplePayMerchant.merchantIdentifierExtension)); use the Merchant Identity Certificate Apple \
          issued for \(merchantIdentifier)
          """
        }
      throw Problem(key: certificateKey, message: message)
    }

    var chainPEM: [String] = []
    for (certificate, block) in zip(chain, certificateBlocks) {
      chainPEM.append((try? certificate.serializeAsPEM().pemString) ?? block.text)
    }
    return MerchantIdentity(
      merchantIdentifier: merchantIdentifier, certificate: leaf, certificateChainPEM: chainPEM,
      keyPEM: (try? privateKey.serializeAsPEM().pemString) ?? keyBlock.text,
      notValidBefore: Int64(leaf.notValidBefore.timeIntervalSince1970.rounded(.down)),
      notValidAfter: Int64(leaf.notValidAfter.timeIntervalSince1970.rounded(.down)))
  }

  /// Days before expiry from which `validity` warns.
  public static let expiryWarningDays = 30

  /// Where `now` (unix seconds) falls in the leaf's validity.
  public func validity(at now: Int64) -> Validity {
    if now < notValidBefore { return .notYetValid(until: RFC3339.format(notValidBefore)) }
    if now > notValidAfter { return .expired(since: RFC3339.format(notValidAfter)) }
    let left = notValidAfter - now
    if left < Int64(Self.expiryWarningDays) * 86_400 { return .expiresSoon(days: Int(left / 86_400)) }
    return .valid
  }
}

/// One `-----BEGIN label-----` … `-----END label-----` block of a PEM text, rebuilt in the
/// canonical form (64-character base64 lines). Anything between blocks, such as openssl's "Bag
/// Attributes", is ignored, and blocks may follow one another on the same line.
struct PEMBlock {
  var label: String
  /// The block from BEGIN to END, newline-terminated.
  var text: String

  static func split(_ pem: String) -> [PEMBlock] {
    var blocks: [PEMBlock] = []
    var rest = pem[...]
    while let begin = rest.range(of: "-----BEGIN ") {
      guard let labelEnd = rest[begin.upperBound...].range(of: "-----") else { break }
      let label = String(rest[begin.upperBound..<labelEnd.lowerBound])
      guard !label.isEmpty, !label.contains("\n"), let end = rest[labelEnd.upperBound...].range(of: "-----END \(label)-----")
      else {
        rest = rest[labelEnd.upperBound...]
        continue
      }
      let body = rest[labelEnd.upperBound..<end.lowerBound].filter { !$0.isWhitespace }
      var text = "-----BEGIN \(label)-----\n"
      var index = body.startIndex
      while index < body.endIndex {
        let next = body.index(index, offsetBy: 64, limitedBy: body.endIndex) ?? body.endIndex
        text += body[index..<next] + "\n"
        index = next
      }
      text += "-----END \(label)-----\n"
      blocks.append(PEMBlock(label: label, text: text))
      rest = rest[end.upperBound...]
    }
    return blocks
  }
}

/// A certificate chain and its private key read from PEM texts, checked to belong together: what
/// a merchant identity and a Wallet order signing identity both start from.
struct CertificateKeyPair {
  /// Leaf first, as given.
  let chain: [Certificate]
  let certificateBlocks: [PEMBlock]
  let privateKey: Certificate.PrivateKey
  let keyBlock: PEMBlock

  /// A problem with one of the two texts: the config key it belongs to and what is wrong.
  struct Problem: Error, Equatable, Sendable {
    var key: String
    var message: String
  }

  /// Reads the certificates of `certificatePEM` and the one unencrypted RSA or EC private key of
  /// `keyPEM` (either text may hold the other's blocks too), and checks that the key is the
  /// leaf's. Problems are reported under `certificateKey` or `privateKeyKey`.
  static func read(certificatePEM: String, keyPEM: String, certificateKey: String, privateKeyKey: String)
    throws(Problem) -> CertificateKeyPair
  {
    let certificateBlocks = PEMBlock.split(certificatePEM).filter { $0.label == "CERTIFICATE" }
    guard !certificateBlocks.isEmpty else {
      throw Problem(key: certificateKey, message: "is not a PEM X.509 certificate (-----BEGIN CERTIFICATE-----)")
    }
    var chain: [Certificate] = []
    for (index, block) in certificateBlocks.enumerated() {
      do {
        chain.append(try Certificate(pemEncoded: block.text))
      } catch {
        let which = index == 0 ? "its first certificate" : "certificate \(index + 1) of its chain"
        throw Problem(key: certificateKey, message: "holds a PEM block that is not an X.509 certificate (\(which))")
      }
    }
    let keyBlocks = PEMBlock.split(keyPEM)
    if keyBlocks.contains(where: { $0.label == "ENCRYPTED PRIVATE KEY" }) || keyPEM.contains("Proc-Type: 4,ENCRYPTED") {
      throw Problem(key: privateKeyKey, message: "is encrypted; give the key unencrypted, readable only by payservice")
    }
    let keyLabels = ["PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY"]
    guard let keyBlock = keyBlocks.first(where: { keyLabels.contains($0.label) }) else {
      throw Problem(
        key: privateKeyKey,
        message: "is not a PEM private key (PKCS#8 \"PRIVATE KEY\", \"RSA PRIVATE KEY\" or SEC1 \"EC PRIVATE KEY\")")
    }
    let privateKey: Certificate.PrivateKey
    do {
      privateKey = try Certificate.PrivateKey(pemEncoded: keyBlock.text)
    } catch {
      throw Problem(key: privateKeyKey, message: "is not a readable RSA or EC private key (\(keyBlock.label))")
    }
    let algorithm = privateKey.publicKey.description
    guard algorithm.hasPrefix("RSA") || ["P256", "P384", "P521"].contains(where: { algorithm.hasPrefix($0) }) else {
      throw Problem(key: privateKeyKey, message: "is not an RSA or EC (P-256, P-384, P-521) key")
    }
    guard privateKey.publicKey == chain[0].publicKey else {
      throw Problem(
        key: privateKeyKey, message: "does not match \(certificateKey): it is the private key of another public key")
    }
    return CertificateKeyPair(
      chain: chain, certificateBlocks: certificateBlocks, privateKey: privateKey, keyBlock: keyBlock)
  }
}
