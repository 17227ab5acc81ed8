import Foundation
import PayServiceCore

/// JSON Schemas (draft-07) of Apple Pay JS's `ApplePayPaymentRequest`, one per Apple Pay JS version
/// 3...14: what a page may pass to `new ApplePaySession(version, request)` at that version.
///
/// Every object is closed (`additionalProperties: false`) and lists only the members introduced at or
/// before the version; enumerations list only the values known at the version. JSON has no Date, so
/// Apple Pay JS's `Date` members are RFC 3339 strings here ("2026-12-21T12:00:00Z"), which the page
/// revives with `new Date(…)` before it calls `ApplePaySession`.
///
/// All of it is built from two tables below, `members` and `values`, whose rows cite their source.
/// The research behind them, with the places where Apple's documentation is silent and the
/// conservative (later) version was taken, is in docs/applepayjs-versions.md:
/// - RN-n: https://developer.apple.com/documentation/applepayontheweb/apple-pay-on-the-web-version-n-release-notes
/// - NET: https://developer.apple.com/documentation/applepayontheweb/supported-networks
/// - APR / ALI / ASM / ADCR / ADPR: the Apple Pay on the Web reference pages of ApplePayPaymentRequest,
///   ApplePayLineItem, ApplePayShippingMethod, ApplePayDateComponentsRange, ApplePayDeferredPaymentRequest
///   (https://developer.apple.com/documentation/applepayontheweb/<type>)
/// - WK-IDL: WebKit Source/WebCore/Modules/applepay/*.idl; WK-RB: ApplePayRequestBase.cpp;
///   WK-CF: ApplePayContactField.cpp
/// - DT: DefinitelyTyped types/applepayjs/index.d.ts (@types/applepayjs 14)
///
/// Validate with the package's `JSONSchemaValidator`; only keywords it implements are used.
public enum ApplePayJSSchema {
  public static let minimumVersion = 3
  public static let maximumVersion = 14
  public static var versions: ClosedRange<Int> { minimumVersion...maximumVersion }

  // MARK: - Public API

  /// The draft-07 schema of `ApplePayPaymentRequest` at `version` (clamped to 3...14).
  public static func paymentRequest(version: Int) -> JSONValue {
    let version = min(max(version, minimumVersion), maximumVersion)
    var definitions: [(key: String, value: JSONValue)] = []
    for type in nestedTypes where !members(of: type, version: version).isEmpty {
      definitions.append((type, objectSchema(type, version: version)))
    }
    guard case .object(var root) = objectSchema(rootType, version: version) else { return .null }
    root.members.insert(contentsOf: [
      ("$schema", .string("http://json-schema.org/draft-07/schema#")),
      ("title", .string("ApplePayPaymentRequest, Apple Pay JS version \(version)")),
    ], at: 0)
    root.members.append(("definitions", .object(JSONObject(definitions))))
    return .object(root)
  }

  /// The problems of `request` as an `ApplePayPaymentRequest` at `version`, each `path: what`
  /// (the path names the member, e.g. `$.supportsCouponCode: no value is allowed here`); empty when
  /// it is valid.
  public static func validate(_ request: JSONValue, version: Int) -> [String] {
    guard versions.contains(version) else {
      return ["$: Apple Pay JS version \(version) is outside \(minimumVersion)...\(maximumVersion)"]
    }
    return JSONSchemaValidator(schema: paymentRequest(version: version)).validate(request)
  }

  /// The lowest version in 3...14 whose schema `request` validates against; nil when none does.
  /// (Each version's schema accepts everything the one before it accepts.)
  public static func lowestAcceptingVersion(_ request: JSONValue) -> Int? {
    versions.first { validate(request, version: $0).isEmpty }
  }

  /// The Apple Pay JS version that introduced a member or an enumeration value, as the tables
  /// record it (1 and 2 are possible: such members are allowed from 3 on); nil when the tables do not
  /// know it. `path` is `Type.member` ("ApplePayLineItem.paymentTiming"), `Enumeration.value`
  /// ("ApplePayContactField.phoneticName", "ApplePayPaymentNetwork.dankort") or a bare member of
  /// ApplePayPaymentRequest ("supportsCouponCode").
  public static func introducedIn(member path: String) -> Int? {
    let parts = path.split(separator: ".", maxSplits: 1).map(String.init)
    let (type, name) = parts.count == 2 ? (parts[0], parts[1]) : (rootType, path)
    if let member = Self.members.first(where: { $0.type == type && $0.name == name }) { return member.since }
    return values.first { $0.type == type && $0.value == name }?.since
  }

  /// The members of `type` (e.g. "ApplePayLineItem") that exist at `version`, in table order.
  public static func members(of type: String, version: Int) -> [String] {
    members.filter { $0.type == type && $0.since <= version }.map(\.name)
  }

  /// The values of an enumeration (e.g. "ApplePayPaymentNetwork") that exist at `version`.
  public static func values(of enumeration: String, version: Int) -> [String] {
    values.filter { $0.type == enumeration && $0.since <= version }.map(\.value)
  }

  // MARK: - Patterns

  /// Apple Pay amounts are decimal strings.
  public static let amountPattern = #"^-?[0-9]+(\.[0-9]+)?$"#
  /// A total above zero (before version 4 the total must be greater than zero, RN-4).
  static let positiveAmountPattern = #"^(0*[1-9][0-9]*(\.[0-9]+)?|0*\.[0-9]*[1-9][0-9]*)$"#
  /// An RFC 3339 date-time: how a JavaScript `Date` travels in JSON.
  public static let datePattern =
    #"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$"#
  static let countryPattern = "^[A-Z]{2}$"
  static let currencyPattern = "^[A-Z]{3}$"
  static let urlPattern = #"^https?://[^\s]+$"#
  /// An IANA time zone name ("America/Los_Angeles", "UTC").
  static let timeZonePattern = #"^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$"#

  // MARK: - The tables

  static let rootType = "ApplePayPaymentRequest"
  static let nestedTypes = [
    "ApplePayLineItem", "ApplePayShippingMethod", "ApplePayDateComponentsRange", "ApplePayDateComponents",
    "ApplePayPaymentContact", "ApplePayRecurringPaymentRequest", "ApplePayAutomaticReloadPaymentRequest",
    "ApplePayDeferredPaymentRequest", "ApplePayPaymentTokenContext",
  ]

  /// One member of an Apple Pay JS dictionary.
  struct Member: Sendable {
    let type: String
    let name: String
    let since: Int
    let required: Bool
    /// The member's schema at a version (enumerations and some rules depend on it).
    let schema: @Sendable (_ version: Int) -> JSONValue

    init(_ type: String, _ name: String, since: Int, required: Bool = false, _ schema: @escaping @Sendable (Int) -> JSONValue) {
      self.type = type
      self.name = name
      self.since = since
      self.required = required
      self.schema = schema
    }

    init(_ type: String, _ name: String, since: Int, required: Bool = false, _ schema: JSONValue) {
      self.init(type, name, since: since, required: required) { _ in schema }
    }
  }

  /// One value of an enumeration.
  struct Value: Sendable {
    let type: String
    let value: String
    let since: Int
    init(_ type: String, _ value: String, since: Int) {
      self.type = type
      self.value = value
      self.since = since
    }
  }

  static let members: [Member] = [
    // ApplePayPaymentRequest
    Member(rootType, "countryCode", since: 1, required: true, text(pattern: countryPattern)),  // APR; WK-IDL 2016
    Member(rootType, "currencyCode", since: 1, required: true, text(pattern: currencyPattern)),  // APR; WK-IDL 2016
    // APR: "supports3DS — Required. This value must be supplied"; enum of 4 values in WK-IDL 2016.
    Member(rootType, "merchantCapabilities", since: 1, required: true) { v in
      object([
        ("type", .string("array")), ("items", enumeration("ApplePayMerchantCapability", v)),
        ("minItems", .number("1")), ("uniqueItems", .bool(true)),
        ("not", object([("items", object([("not", object([("const", .string("supports3DS"))]))]))])),
      ])
    },
    // APR; NET gives each network's first version.
    Member(rootType, "supportedNetworks", since: 1, required: true) { v in
      array(of: enumeration("ApplePayPaymentNetwork", v), minItems: 1)
    },
    // APR; RN-4: "In versions of Apple Pay JS prior to version 4, the amount of the total must be greater than zero."
    Member(rootType, "total", since: 1, required: true) { v in
      v >= 4 ? ref("ApplePayLineItem")
        : object([
          ("allOf", .array([
            ref("ApplePayLineItem"),
            object([("properties", object([("amount", text(pattern: positiveAmountPattern))]))]),
          ]))
        ])
    },
    Member(rootType, "lineItems", since: 1, array(of: ref("ApplePayLineItem"))),  // APR; WK-IDL 2016
    Member(rootType, "requiredBillingContactFields", since: 1) { v in array(of: enumeration("ApplePayContactField", v)) },  // APR; WK-IDL 2016
    Member(rootType, "billingContact", since: 1, ref("ApplePayPaymentContact")),  // APR; WK-IDL 2016
    Member(rootType, "requiredShippingContactFields", since: 1) { v in array(of: enumeration("ApplePayContactField", v)) },  // APR; WK-IDL 2016
    Member(rootType, "shippingContact", since: 1, ref("ApplePayPaymentContact")),  // APR; WK-IDL 2016
    Member(rootType, "shippingType", since: 1) { v in enumeration("ApplePayShippingType", v) },  // APR; WK-IDL 2016
    Member(rootType, "shippingMethods", since: 1, array(of: ref("ApplePayShippingMethod"))),  // APR; WK-IDL 2016
    Member(rootType, "applicationData", since: 1, text()),  // APR; WK-IDL 2016 (no version check in WK-RB)
    Member(rootType, "supportedCountries", since: 3, array(of: text(pattern: countryPattern))),  // WK-RB: `if (version >= 3)`
    Member(rootType, "supportsCouponCode", since: 12, boolean),  // RN-12
    Member(rootType, "couponCode", since: 12, text()),  // RN-12
    Member(rootType, "shippingContactEditingMode", since: 12) { v in enumeration("ApplePayShippingContactEditingMode", v) },  // RN-12
    Member(rootType, "recurringPaymentRequest", since: 14, ref("ApplePayRecurringPaymentRequest")),  // RN-14
    Member(rootType, "automaticReloadPaymentRequest", since: 14, ref("ApplePayAutomaticReloadPaymentRequest")),  // RN-14
    Member(rootType, "multiTokenContexts", since: 14, array(of: ref("ApplePayPaymentTokenContext"), minItems: 1)),  // RN-14
    // APR/deferredPaymentRequest gives no version and RN-14 does not list it; PassKit's counterpart is
    // iOS 16.4 / macOS 13.3, which run Apple Pay version 14 (RN-14: macOS 13, iOS 16): silent, so 14.
    Member(rootType, "deferredPaymentRequest", since: 14, ref("ApplePayDeferredPaymentRequest")),

    // ApplePayLineItem (ALI)
    Member("ApplePayLineItem", "label", since: 1, required: true, text()),  // ALI; DT `label: string`
    Member("ApplePayLineItem", "amount", since: 1, required: true, text(pattern: amountPattern)),  // ALI; DT `amount: string`
    Member("ApplePayLineItem", "type", since: 1) { v in enumeration("ApplePayLineItemType", v) },  // ALI; WK-IDL
    // ALI gives no version for these and RN-12/RN-14 do not name them; their only Apple Pay JS uses
    // (recurring/automatic reload/deferred requests) came in 14: silent, so 14.
    Member("ApplePayLineItem", "paymentTiming", since: 14) { v in enumeration("ApplePayPaymentTiming", v) },  // ALI
    Member("ApplePayLineItem", "recurringPaymentStartDate", since: 14, text(pattern: datePattern)),  // ALI (Date)
    Member("ApplePayLineItem", "recurringPaymentIntervalUnit", since: 14) { v in enumeration("ApplePayRecurringPaymentDateUnit", v) },  // ALI
    Member("ApplePayLineItem", "recurringPaymentIntervalCount", since: 14, integer(minimum: 1)),  // ALI (long, default 1)
    Member("ApplePayLineItem", "recurringPaymentEndDate", since: 14, text(pattern: datePattern)),  // ALI (Date)
    Member("ApplePayLineItem", "deferredPaymentDate", since: 14, text(pattern: datePattern)),  // ALI (Date)
    Member("ApplePayLineItem", "automaticReloadPaymentThresholdAmount", since: 14, text(pattern: amountPattern)),  // ALI; RN-14

    // ApplePayShippingMethod (ASM; WK-IDL: all four required)
    Member("ApplePayShippingMethod", "label", since: 1, required: true, text()),
    Member("ApplePayShippingMethod", "detail", since: 1, required: true, text()),
    Member("ApplePayShippingMethod", "amount", since: 1, required: true, text(pattern: amountPattern)),
    Member("ApplePayShippingMethod", "identifier", since: 1, required: true, text()),
    Member("ApplePayShippingMethod", "dateComponentsRange", since: 12, ref("ApplePayDateComponentsRange")),  // RN-12
    // (`selected` is not an Apple Pay JS member per ASM and the WebKit IDLs: not listed, so rejected.)

    // ApplePayDateComponentsRange / ApplePayDateComponents (ADCR; with dateComponentsRange, RN-12)
    Member("ApplePayDateComponentsRange", "startDateComponents", since: 12, required: true, ref("ApplePayDateComponents")),
    Member("ApplePayDateComponentsRange", "endDateComponents", since: 12, required: true, ref("ApplePayDateComponents")),
    Member("ApplePayDateComponents", "years", since: 12, integer(minimum: 1)),  // ADCR (long)
    Member("ApplePayDateComponents", "months", since: 12, integer(minimum: 1, maximum: 12)),  // ADCR; Gregorian
    Member("ApplePayDateComponents", "days", since: 12, integer(minimum: 1, maximum: 31)),  // ADCR
    Member("ApplePayDateComponents", "hours", since: 12, integer(minimum: 0, maximum: 23)),  // ADCR

    // ApplePayPaymentContact (DT; ApplePayPaymentContact page). Phonetic names and the sub-areas
    // came with version 3 (ACF: phoneticName "available starting in API version 3").
    Member("ApplePayPaymentContact", "emailAddress", since: 1, text()),
    Member("ApplePayPaymentContact", "phoneNumber", since: 1, text()),
    Member("ApplePayPaymentContact", "givenName", since: 1, text()),
    Member("ApplePayPaymentContact", "familyName", since: 1, text()),
    Member("ApplePayPaymentContact", "phoneticGivenName", since: 3, text()),
    Member("ApplePayPaymentContact", "phoneticFamilyName", since: 3, text()),
    Member("ApplePayPaymentContact", "addressLines", since: 1, object([("type", .string("array")), ("items", text())])),
    Member("ApplePayPaymentContact", "subLocality", since: 3, text()),
    Member("ApplePayPaymentContact", "locality", since: 1, text()),
    Member("ApplePayPaymentContact", "postalCode", since: 1, text()),
    Member("ApplePayPaymentContact", "subAdministrativeArea", since: 3, text()),
    Member("ApplePayPaymentContact", "administrativeArea", since: 1, text()),
    Member("ApplePayPaymentContact", "country", since: 1, text()),
    Member("ApplePayPaymentContact", "countryCode", since: 1, text()),

    // ApplePayRecurringPaymentRequest (RN-14; DT). regularBilling/trialBilling pages: "Set the
    // paymentTiming property of the line item to "recurring" to avoid an error."
    Member("ApplePayRecurringPaymentRequest", "paymentDescription", since: 14, required: true, text()),
    Member("ApplePayRecurringPaymentRequest", "regularBilling", since: 14, required: true, billing(timing: "recurring")),
    Member("ApplePayRecurringPaymentRequest", "trialBilling", since: 14, billing(timing: "recurring")),
    Member("ApplePayRecurringPaymentRequest", "billingAgreement", since: 14, text()),
    Member("ApplePayRecurringPaymentRequest", "managementURL", since: 14, required: true, text(pattern: urlPattern)),
    Member("ApplePayRecurringPaymentRequest", "tokenNotificationURL", since: 14, text(pattern: urlPattern)),

    // ApplePayAutomaticReloadPaymentRequest (RN-14; DT). automaticReloadBilling page: paymentTiming
    // "automaticReload", threshold in automaticReloadPaymentThresholdAmount.
    Member("ApplePayAutomaticReloadPaymentRequest", "paymentDescription", since: 14, required: true, text()),
    Member("ApplePayAutomaticReloadPaymentRequest", "automaticReloadBilling", since: 14, required: true,
           billing(timing: "automaticReload", requiring: "automaticReloadPaymentThresholdAmount")),
    Member("ApplePayAutomaticReloadPaymentRequest", "billingAgreement", since: 14, text()),
    Member("ApplePayAutomaticReloadPaymentRequest", "managementURL", since: 14, required: true, text(pattern: urlPattern)),
    Member("ApplePayAutomaticReloadPaymentRequest", "tokenNotificationURL", since: 14, text(pattern: urlPattern)),

    // ApplePayDeferredPaymentRequest (ADPR; version silent, see deferredPaymentRequest above).
    Member("ApplePayDeferredPaymentRequest", "paymentDescription", since: 14, required: true, text()),
    Member("ApplePayDeferredPaymentRequest", "deferredBilling", since: 14, required: true,
           billing(timing: "deferred", requiring: "deferredPaymentDate")),
    Member("ApplePayDeferredPaymentRequest", "billingAgreement", since: 14, text()),
    Member("ApplePayDeferredPaymentRequest", "managementURL", since: 14, required: true, text(pattern: urlPattern)),
    Member("ApplePayDeferredPaymentRequest", "tokenNotificationURL", since: 14, text(pattern: urlPattern)),
    Member("ApplePayDeferredPaymentRequest", "freeCancellationDate", since: 14, text(pattern: datePattern)),  // ADPR (Date)
    Member("ApplePayDeferredPaymentRequest", "freeCancellationDateTimeZone", since: 14, text(pattern: timeZonePattern)),  // ADPR

    // ApplePayPaymentTokenContext (RN-14 multiTokenContexts; DT)
    Member("ApplePayPaymentTokenContext", "merchantIdentifier", since: 14, required: true, text()),
    Member("ApplePayPaymentTokenContext", "externalIdentifier", since: 14, required: true, text()),
    Member("ApplePayPaymentTokenContext", "merchantName", since: 14, required: true, text()),
    Member("ApplePayPaymentTokenContext", "merchantDomain", since: 14, text()),
    Member("ApplePayPaymentTokenContext", "amount", since: 14, required: true, text(pattern: amountPattern)),
  ]

  static let values: [Value] = [
    // WK-IDL 2016 (ApplePayPaymentRequest.idl): all four capabilities.
    Value("ApplePayMerchantCapability", "supports3DS", since: 1),
    Value("ApplePayMerchantCapability", "supportsEMV", since: 1),
    Value("ApplePayMerchantCapability", "supportsCredit", since: 1),
    Value("ApplePayMerchantCapability", "supportsDebit", since: 1),
    // ACF: four "available in all versions", phoneticName "starting in API version 3"; WK-CF.
    Value("ApplePayContactField", "email", since: 1),
    Value("ApplePayContactField", "name", since: 1),
    Value("ApplePayContactField", "phone", since: 1),
    Value("ApplePayContactField", "postalAddress", since: 1),
    Value("ApplePayContactField", "phoneticName", since: 3),
    // WK-IDL 2016: all four shipping types.
    Value("ApplePayShippingType", "shipping", since: 1),
    Value("ApplePayShippingType", "delivery", since: 1),
    Value("ApplePayShippingType", "storePickup", since: 1),
    Value("ApplePayShippingType", "servicePickup", since: 1),
    // RN-12; ApplePayShippingContactEditingMode page ("enabled" deprecated for "available"; WebKit's enum has all three).
    Value("ApplePayShippingContactEditingMode", "available", since: 12),
    Value("ApplePayShippingContactEditingMode", "enabled", since: 12),
    Value("ApplePayShippingContactEditingMode", "storePickup", since: 12),
    // ALI; WK-IDL.
    Value("ApplePayLineItemType", "final", since: 1),
    Value("ApplePayLineItemType", "pending", since: 1),
    // ApplePayPaymentTiming page; with paymentTiming, 14.
    Value("ApplePayPaymentTiming", "immediate", since: 14),
    Value("ApplePayPaymentTiming", "recurring", since: 14),
    Value("ApplePayPaymentTiming", "deferred", since: 14),
    Value("ApplePayPaymentTiming", "automaticReload", since: 14),
    // ApplePayRecurringPaymentDateUnit page; with recurringPaymentIntervalUnit, 14.
    Value("ApplePayRecurringPaymentDateUnit", "year", since: 14),
    Value("ApplePayRecurringPaymentDateUnit", "month", since: 14),
    Value("ApplePayRecurringPaymentDateUnit", "day", since: 14),
    Value("ApplePayRecurringPaymentDateUnit", "hour", since: 14),
    Value("ApplePayRecurringPaymentDateUnit", "minute", since: 14),
    // NET (first version of each network) and the release notes. bankAxept is 15 (NET): never
    // allowed at 3...14. Networks whose version is not confirmed are left out.
    Value("ApplePayPaymentNetwork", "amex", since: 1),
    Value("ApplePayPaymentNetwork", "chinaUnionPay", since: 1),
    Value("ApplePayPaymentNetwork", "discover", since: 1),
    Value("ApplePayPaymentNetwork", "interac", since: 1),
    Value("ApplePayPaymentNetwork", "masterCard", since: 1),
    Value("ApplePayPaymentNetwork", "privateLabel", since: 1),
    Value("ApplePayPaymentNetwork", "visa", since: 1),
    Value("ApplePayPaymentNetwork", "jcb", since: 2),  // RN-2
    Value("ApplePayPaymentNetwork", "cartesBancaires", since: 4),  // RN-4
    Value("ApplePayPaymentNetwork", "eftpos", since: 4),  // RN-4
    Value("ApplePayPaymentNetwork", "electron", since: 4),  // RN-4
    Value("ApplePayPaymentNetwork", "maestro", since: 4),  // RN-4
    Value("ApplePayPaymentNetwork", "vPay", since: 4),  // RN-4
    Value("ApplePayPaymentNetwork", "elo", since: 5),  // RN-5
    Value("ApplePayPaymentNetwork", "mada", since: 5),  // RN-5
    Value("ApplePayPaymentNetwork", "mir", since: 11),  // RN-11
    Value("ApplePayPaymentNetwork", "girocard", since: 11),  // RN-11
    Value("ApplePayPaymentNetwork", "dankort", since: 13),  // RN-13
    Value("ApplePayPaymentNetwork", "bancomat", since: 14),  // NET
    Value("ApplePayPaymentNetwork", "bancontact", since: 14),  // NET
    Value("ApplePayPaymentNetwork", "bankAxept", since: 15),  // NET
  ]

  /// Rules across members of one object: (type, since, schema).
  static let rules: [(type: String, since: Int, schema: JSONValue)] = {
    // APR (recurringPaymentRequest, DT) and PassKit's deferredPaymentRequest: the recurring, automatic
    // reload and deferred requests and multiTokenContexts cannot be combined.
    let exclusive = ["recurringPaymentRequest", "automaticReloadPaymentRequest", "deferredPaymentRequest", "multiTokenContexts"]
    var rules: [(type: String, since: Int, schema: JSONValue)] = []
    for (index, first) in exclusive.enumerated() {
      for second in exclusive[(index + 1)...] {
        rules.append((rootType, 14, object([("not", object([("required", .array([.string(first), .string(second)]))]))])))
      }
    }
    // ADPR: "If you set freeCancellationDate, you need to set freeCancellationDateTimeZone as well" (and back).
    let date = JSONValue.string("freeCancellationDate"), zone = JSONValue.string("freeCancellationDateTimeZone")
    rules.append((
      "ApplePayDeferredPaymentRequest", 14,
      object([
        ("anyOf", .array([
          object([("required", .array([date, zone]))]),
          object([("allOf", .array([
            object([("not", object([("required", .array([date]))]))]),
            object([("not", object([("required", .array([zone]))]))]),
          ]))]),
        ]))
      ])
    ))
    return rules
  }()

  // MARK: - Building

  static func objectSchema(_ type: String, version: Int) -> JSONValue {
    let present = members.filter { $0.type == type && $0.since <= version }
    var keywords: [(String, JSONValue)] = [("type", .string("object"))]
    let required = present.filter(\.required).map { JSONValue.string($0.name) }
    if !required.isEmpty { keywords.append(("required", .array(required))) }
    keywords.append(("properties", object(present.map { ($0.name, $0.schema(version)) })))
    keywords.append(("additionalProperties", .bool(false)))
    let typeRules = rules.filter { $0.type == type && $0.since <= version }.map(\.schema)
    if !typeRules.isEmpty { keywords.append(("allOf", .array(typeRules))) }
    return object(keywords)
  }

  static func object(_ members: [(String, JSONValue)]) -> JSONValue {
    .object(JSONObject(members.map { (key: $0.0, value: $0.1) }))
  }

  static func text(pattern: String? = nil) -> JSONValue {
    var keywords: [(String, JSONValue)] = [("type", .string("string"))]
    if let pattern { keywords.append(("pattern", .string(pattern))) }
    return object(keywords)
  }

  static let boolean = object([("type", .string("boolean"))])

  static func integer(minimum: Int? = nil, maximum: Int? = nil) -> JSONValue {
    var keywords: [(String, JSONValue)] = [("type", .string("integer"))]
    if let minimum { keywords.append(("minimum", .number(String(minimum)))) }
    if let maximum { keywords.append(("maximum", .number(String(maximum)))) }
    return object(keywords)
  }

  static func ref(_ type: String) -> JSONValue {
    object([("$ref", .string("#/definitions/\(type)"))])
  }

  /// An array of `items` without repeats.
  static func array(of items: JSONValue, minItems: Int? = nil) -> JSONValue {
    var keywords: [(String, JSONValue)] = [("type", .string("array")), ("items", items)]
    if let minItems { keywords.append(("minItems", .number(String(minItems)))) }
    if case .object(let schema) = items, schema["$ref"] == nil { keywords.append(("uniqueItems", .bool(true))) }
    return object(keywords)
  }

  /// A string restricted to the enumeration's values at `version`.
  static func enumeration(_ name: String, _ version: Int) -> JSONValue {
    object([("type", .string("string")), ("enum", .array(values(of: name, version: version).map { .string($0) }))])
  }

  /// A line item whose paymentTiming must be `timing` (and which must carry `member`, if given).
  static func billing(timing: String, requiring member: String? = nil) -> JSONValue {
    var required: [JSONValue] = [.string("paymentTiming")]
    if let member { required.append(.string(member)) }
    return object([
      ("allOf", .array([
        ref("ApplePayLineItem"),
        object([("required", .array(required)), ("properties", object([("paymentTiming", object([("const", .string(timing))]))]))]),
      ]))
    ])
  }
}
