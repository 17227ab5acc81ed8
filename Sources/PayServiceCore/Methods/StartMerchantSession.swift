/// Answers the sheet's `onvalidatemerchant`: requests a merchant session from the Apple Pay gateway
/// named by the event's validation URL, over mutual TLS with the merchant identity certificate.
public enum StartMerchantSession: RPCMethod {
  public static let name = "startMerchantSession"

  public static let documentation = MethodDocumentation(
    summary: "Request an Apple Pay merchant session for the sheet's onvalidatemerchant event.",
    description: """
      Give the event's validationURL and the page's domain. The URL must be https on one of Apple's \
      Apple Pay gateway hosts (or a host the config's applePay.merchantSession.additionalHosts adds) \
      and the domain one of applePay.domains; anything else is refused as invalid params before any \
      connection is made. payservice then posts {merchantIdentifier, displayName, initiative: "web", \
      initiativeContext: domain} to the URL over mutual TLS with the merchant identity certificate. \
      status success carries Apple's merchantSession object unchanged: pass it to \
      completeMerchantValidation. status failure carries a code (identity_certificate_expired, \
      identity_certificate_rejected, server_not_trusted, merchant_unknown, domain_not_registered, \
      http_status, timeout, unreachable, invalid_response, not_configured) and a message naming the \
      cause: abort the sheet at once. A validation URL is single use, so nothing is retried. Changes nothing.
      """,
    readOnly: true, idempotent: false)
  public static let usesStore = false
  public static let runsAsNotification = false

  public struct Params: Sendable {
    public var validationURL = ""
    public var domain = ""
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member(
        "validationURL", \.validationURL,
        .string("The onvalidatemerchant event's validationURL: https on an Apple Pay gateway host.", minLength: 1),
        read: { value, path, reader in
          guard let text = reader.string(value, path()) else { return nil }
          if text.utf8.count > MerchantSessionURLPolicy.maximumLength {
            reader.fail(path(), "must be at most \(MerchantSessionURLPolicy.maximumLength) bytes")
            return nil
          }
          return text
        }),
      .member(
        "domain", \.domain,
        .string("The page's domain (location.hostname): one of the config's applePay.domains.", minLength: 1)),
    ],
    check: { params, reader in
      guard let settings = reader.context?.config.merchantSession else { return }
      if case .failure(let problem) = settings.urlPolicy.check(params.validationURL) {
        reader.fail("validationURL", problem.message)
      }
      if !settings.domains.contains(params.domain.lowercased()) {
        reader.fail(
          "domain",
          "\"\(params.domain)\" is not one of applePay.domains (\(settings.domains.joined(separator: ", "))); "
            + "register and verify the domain with Apple, then list it there")
      }
    })

  public enum Status: String, Sendable, WireEnum {
    case success, failure
  }

  public struct Result: MethodResult, WireObject {
    public var status = Status.success
    public var merchantSession: JSONValue?
    public var code: String?
    public var message: String?

    public static let shape = ObjectShape<Result>(
      blank: { Result() },
      [
        .member("status", \.status),
        .member(
          "merchantSession", \.merchantSession, .optional,
          JSONSchema(
            json: .object(
              JSONObject([
                ("type", .string("object")),
                ("description", .string("Apple's merchant session, unchanged: pass it to completeMerchantValidation.")),
              ])))),
        .member("code", \.code, .optional, .string("Why no session was obtained (status failure).")),
        .member("message", \.message, .optional, .string("The cause, for the merchant's logs and support.")),
      ])

    public var failure: ResultFailure? {
      guard status == .failure else { return nil }
      return ResultFailure(status: status.rawValue, code: code, message: message)
    }
  }

  public static func run(_ params: Params, context: ServiceContext) -> Result {
    let config = context.config
    guard let calls = context.merchantSessions, let settings = config.merchantSession,
      case .success(let endpoint) = settings.urlPolicy.check(params.validationURL)
    else {
      return Result(
        status: .failure, code: "not_configured",
        message:
          "this payservice has no merchant identity: set applePay.merchantIdentityCertificate, merchantIdentityKey and domains")
    }
    var body = JSONWriter(capacity: 256)
    body.beginObject()
    body.member("merchantIdentifier", config.merchant.identifier)
    body.member("displayName", config.merchant.displayName)
    body.member("initiative", "web")
    body.member("initiativeContext", params.domain.lowercased())
    body.endObject()
    switch calls.start(endpoint, body: body.bytes) {
    case .session(let session): return Result(status: .success, merchantSession: session)
    case .failed(let failure): return Result(status: .failure, code: failure.code.rawValue, message: failure.message)
    }
  }
}
