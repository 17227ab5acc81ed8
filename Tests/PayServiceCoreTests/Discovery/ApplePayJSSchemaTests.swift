import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// The per-version schemas of Apple Pay JS's ApplePayPaymentRequest (ApplePayJSSchema), checked on
/// Apple's own example requests (JSON, so dates are RFC 3339 strings the page revives).
@Suite("Apple Pay JS payment request schemas")
struct ApplePayJSSchemaTests {
  static func parse(_ text: String) -> JSONValue {
    do { return try JSONParser.parse(text) } catch {
      Issue.record("not JSON: \(error.message)")
      return .null
    }
  }

  /// Adds (or replaces) members of an object.
  static func with(_ value: JSONValue, _ members: [(String, String)]) -> JSONValue {
    guard case .object(var object) = value else { return value }
    for (key, text) in members {
      object.members.removeAll { $0.key == key }
      object.members.append((key, parse(text)))
    }
    return .object(object)
  }

  // MARK: - Apple's examples

  /// "Creating an Apple Pay session" (Apple Pay on the Web): the smallest request.
  static let plain = parse(
    """
    {
      "countryCode": "US",
      "currencyCode": "USD",
      "merchantCapabilities": ["supports3DS"],
      "supportedNetworks": ["visa", "masterCard", "amex", "discover"],
      "total": {"label": "Demo (Card is not charged)", "type": "final", "amount": "1.99"}
    }
    """)

  /// A version-3 request using everything version 3 has.
  static let fullVersion3 = parse(
    """
    {
      "countryCode": "US",
      "currencyCode": "USD",
      "merchantCapabilities": ["supports3DS", "supportsCredit", "supportsDebit"],
      "supportedNetworks": ["visa", "masterCard", "amex", "discover", "jcb"],
      "supportedCountries": ["US", "CA"],
      "requiredBillingContactFields": ["postalAddress", "name", "phoneticName"],
      "requiredShippingContactFields": ["postalAddress", "name", "phone", "email"],
      "shippingType": "delivery",
      "shippingMethods": [
        {"label": "Free Shipping", "detail": "Arrives in 5 to 7 days", "amount": "0.00", "identifier": "FreeShip"}
      ],
      "shippingContact": {"givenName": "Ann", "familyName": "Lee", "addressLines": ["1 Infinite Loop"], "locality": "Cupertino",
                          "administrativeArea": "CA", "postalCode": "95014", "countryCode": "US"},
      "applicationData": "eyJvcmRlciI6IjEyMyJ9",
      "lineItems": [
        {"label": "Bag Subtotal", "type": "final", "amount": "35.00"},
        {"label": "Estimated Tax", "type": "pending", "amount": "3.06"}
      ],
      "total": {"label": "Demo (Card is not charged)", "type": "final", "amount": "38.06"}
    }
    """)

  /// ApplePayPaymentRequest.supportsCouponCode / couponCode (version 12).
  static let coupon = with(plain, [("supportsCouponCode", "true"), ("couponCode", #""FESTIVAL""#)])

  /// ApplePayPaymentRequest.shippingContactEditingMode and ApplePayShippingMethod.dateComponentsRange
  /// (version 12): a store pickup.
  static let storePickup = with(plain, [
    ("shippingType", #""storePickup""#),
    ("shippingContactEditingMode", #""storePickup""#),
    ("requiredShippingContactFields", #"["postalAddress"]"#),
    ("shippingContact", #"{"addressLines": ["123 Any Street"], "locality": "Any Town", "administrativeArea": "CA", "postalCode": "95014", "countryCode": "US", "familyName": "COMPANY, INC."}"#),
    ("shippingMethods", """
      [{"label": "Pickup", "detail": "Ready in 3 to 5 days", "amount": "0.00", "identifier": "Pickup",
        "dateComponentsRange": {"startDateComponents": {"years": 2026, "months": 12, "days": 18},
                                "endDateComponents": {"years": 2026, "months": 12, "days": 20}}}]
      """),
  ])

  /// ApplePayRecurringPaymentRequest (version 14): a subscription with a free trial.
  static let subscription = with(plain, [
    ("lineItems", """
      [{"label": "Free trial", "amount": "0.00", "paymentTiming": "recurring",
        "recurringPaymentStartDate": "2026-01-01T00:00:00Z", "recurringPaymentEndDate": "2026-01-31T00:00:00Z",
        "recurringPaymentIntervalUnit": "month", "recurringPaymentIntervalCount": 1},
       {"label": "Monthly plan", "amount": "4.99", "paymentTiming": "recurring",
        "recurringPaymentStartDate": "2026-02-01T00:00:00Z", "recurringPaymentIntervalUnit": "month",
        "recurringPaymentIntervalCount": 1}]
      """),
    ("total", #"{"label": "Demo (Card is not charged)", "amount": "0.00"}"#),
    ("recurringPaymentRequest", """
      {"paymentDescription": "A description of the recurring payment to display to the user in the payment sheet.",
       "trialBilling": {"label": "Free trial", "amount": "0.00", "paymentTiming": "recurring",
                        "recurringPaymentStartDate": "2026-01-01T00:00:00Z", "recurringPaymentEndDate": "2026-01-31T00:00:00Z"},
       "regularBilling": {"label": "Monthly plan", "amount": "4.99", "paymentTiming": "recurring",
                          "recurringPaymentStartDate": "2026-02-01T00:00:00Z",
                          "recurringPaymentIntervalUnit": "month", "recurringPaymentIntervalCount": 1},
       "billingAgreement": "A localized billing agreement displayed to the user in the payment sheet prior to the payment authorization.",
       "managementURL": "https://applepaydemo.apple.com",
       "tokenNotificationURL": "https://applepaydemo.apple.com"}
      """),
  ])

  /// ApplePayAutomaticReloadPaymentRequest (version 14): a store card top-up.
  static let automaticReload = with(plain, [
    ("lineItems", #"[{"label": "Automatic reload", "amount": "25.00", "paymentTiming": "automaticReload", "automaticReloadPaymentThresholdAmount": "5.00"}]"#),
    ("automaticReloadPaymentRequest", """
      {"paymentDescription": "A description of the automatic reload payment to display to the user in the payment sheet.",
       "automaticReloadBilling": {"label": "Automatic reload", "amount": "25.00", "paymentTiming": "automaticReload",
                                  "automaticReloadPaymentThresholdAmount": "5.00"},
       "billingAgreement": "A localized billing agreement displayed to the user in the payment sheet prior to the payment authorization.",
       "managementURL": "https://applepaydemo.apple.com",
       "tokenNotificationURL": "https://applepaydemo.apple.com"}
      """),
  ])

  /// ApplePayDeferredPaymentRequest (version 14 by the conservative reading): a pre-order paid on shipping.
  static let preOrder = with(plain, [
    ("lineItems", #"[{"label": "Pre-order, charged when it ships", "amount": "50.00", "paymentTiming": "deferred", "deferredPaymentDate": "2026-12-21T12:00:00Z"}]"#),
    ("total", #"{"label": "Demo (Card is not charged)", "amount": "0.00"}"#),
    ("deferredPaymentRequest", """
      {"paymentDescription": "Pre-order of the Limited Edition",
       "deferredBilling": {"label": "Pre-order, charged when it ships", "amount": "50.00", "paymentTiming": "deferred",
                           "deferredPaymentDate": "2026-12-21T12:00:00Z"},
       "billingAgreement": "You will be charged when your order ships.",
       "managementURL": "https://applepaydemo.apple.com",
       "freeCancellationDate": "2026-12-14T12:00:00Z",
       "freeCancellationDateTimeZone": "America/Los_Angeles"}
      """),
  ])

  struct Example: Sendable, CustomTestStringConvertible {
    let name: String
    let request: JSONValue
    let version: Int
    /// Every problem at version - 1.
    let problemsBefore: [String]
    var testDescription: String { name }
  }

  static let examples: [Example] = [
    Example(
      name: "coupon code", request: coupon, version: 12,
      problemsBefore: ["$.supportsCouponCode: no value is allowed here", "$.couponCode: no value is allowed here"]),
    Example(
      name: "store pickup with a delivery date range", request: storePickup, version: 12,
      problemsBefore: [
        "$.shippingMethods[0].dateComponentsRange: no value is allowed here",
        "$.shippingContactEditingMode: no value is allowed here",
      ]),
    Example(
      name: "recurring subscription with a trial", request: subscription, version: 14,
      problemsBefore: [
        "$.lineItems[0].paymentTiming: no value is allowed here",
        "$.lineItems[0].recurringPaymentStartDate: no value is allowed here",
        "$.lineItems[0].recurringPaymentEndDate: no value is allowed here",
        "$.lineItems[0].recurringPaymentIntervalUnit: no value is allowed here",
        "$.lineItems[0].recurringPaymentIntervalCount: no value is allowed here",
        "$.lineItems[1].paymentTiming: no value is allowed here",
        "$.lineItems[1].recurringPaymentStartDate: no value is allowed here",
        "$.lineItems[1].recurringPaymentIntervalUnit: no value is allowed here",
        "$.lineItems[1].recurringPaymentIntervalCount: no value is allowed here",
        "$.recurringPaymentRequest: no value is allowed here",
      ]),
    Example(
      name: "automatic reload", request: automaticReload, version: 14,
      problemsBefore: [
        "$.lineItems[0].paymentTiming: no value is allowed here",
        "$.lineItems[0].automaticReloadPaymentThresholdAmount: no value is allowed here",
        "$.automaticReloadPaymentRequest: no value is allowed here",
      ]),
    Example(
      name: "deferred pre-order", request: preOrder, version: 14,
      problemsBefore: [
        "$.lineItems[0].paymentTiming: no value is allowed here",
        "$.lineItems[0].deferredPaymentDate: no value is allowed here",
        "$.deferredPaymentRequest: no value is allowed here",
      ]),
  ]

  // MARK: - The schemas themselves

  @Test("each version's schema is a draft-07 schema the validator fully implements", arguments: Array(3...14))
  func schemasAreDraft07(version: Int) {
    let schema = ApplePayJSSchema.paymentRequest(version: version)
    #expect(JSONSchemaValidator.schemaProblems(schema, at: "$") == [])
    #expect(schema["$schema"]?.stringValue == "http://json-schema.org/draft-07/schema#")
    #expect(schema["additionalProperties"] == .bool(false))
    // Nothing outside the validator's dialect: validating any request never reports an unimplemented keyword.
    for example in [Self.plain, Self.fullVersion3] + Self.examples.map(\.request) {
      #expect(!ApplePayJSSchema.validate(example, version: version).contains { $0.contains("does not implement") })
    }
  }

  @Test("the version range and the ApplePayPaymentRequest members of each version")
  func membersByVersion() {
    #expect(ApplePayJSSchema.minimumVersion == 3)
    #expect(ApplePayJSSchema.maximumVersion == 14)
    let version3 = [
      "countryCode", "currencyCode", "merchantCapabilities", "supportedNetworks", "total", "lineItems",
      "requiredBillingContactFields", "billingContact", "requiredShippingContactFields", "shippingContact", "shippingType",
      "shippingMethods", "applicationData", "supportedCountries",
    ]
    let version12 = version3 + ["supportsCouponCode", "couponCode", "shippingContactEditingMode"]
    let version14 = version12 + ["recurringPaymentRequest", "automaticReloadPaymentRequest", "multiTokenContexts", "deferredPaymentRequest"]
    for version in 3...11 { #expect(ApplePayJSSchema.members(of: "ApplePayPaymentRequest", version: version) == version3) }
    for version in 12...13 { #expect(ApplePayJSSchema.members(of: "ApplePayPaymentRequest", version: version) == version12) }
    #expect(ApplePayJSSchema.members(of: "ApplePayPaymentRequest", version: 14) == version14)
    #expect(ApplePayJSSchema.members(of: "ApplePayLineItem", version: 13) == ["label", "amount", "type"])
    #expect(
      ApplePayJSSchema.members(of: "ApplePayLineItem", version: 14) == [
        "label", "amount", "type", "paymentTiming", "recurringPaymentStartDate", "recurringPaymentIntervalUnit",
        "recurringPaymentIntervalCount", "recurringPaymentEndDate", "deferredPaymentDate", "automaticReloadPaymentThresholdAmount",
      ])
    #expect(ApplePayJSSchema.members(of: "ApplePayShippingMethod", version: 11) == ["label", "detail", "amount", "identifier"])
    #expect(
      ApplePayJSSchema.members(of: "ApplePayShippingMethod", version: 12) == ["label", "detail", "amount", "identifier", "dateComponentsRange"])
    #expect(ApplePayJSSchema.members(of: "ApplePayRecurringPaymentRequest", version: 13) == [])
  }

  @Test("introducedIn answers from the table")
  func introducedIn() {
    let expected: [(String, Int?)] = [
      ("countryCode", 1), ("applicationData", 1), ("shippingType", 1), ("supportedCountries", 3),
      ("supportsCouponCode", 12), ("couponCode", 12), ("shippingContactEditingMode", 12),
      ("ApplePayPaymentRequest.recurringPaymentRequest", 14), ("automaticReloadPaymentRequest", 14),
      ("deferredPaymentRequest", 14), ("multiTokenContexts", 14),
      ("ApplePayShippingMethod.dateComponentsRange", 12), ("ApplePayDateComponents.days", 12),
      ("ApplePayLineItem.label", 1), ("ApplePayLineItem.paymentTiming", 14), ("ApplePayLineItem.recurringPaymentStartDate", 14),
      ("ApplePayLineItem.deferredPaymentDate", 14), ("ApplePayLineItem.automaticReloadPaymentThresholdAmount", 14),
      ("ApplePayDeferredPaymentRequest.freeCancellationDateTimeZone", 14),
      ("ApplePayContactField.phoneticName", 3), ("ApplePayContactField.email", 1),
      ("ApplePayShippingType.servicePickup", 1), ("ApplePayShippingContactEditingMode.storePickup", 12),
      ("ApplePayPaymentTiming.automaticReload", 14), ("ApplePayMerchantCapability.supportsEMV", 1),
      ("ApplePayPaymentNetwork.jcb", 2), ("ApplePayPaymentNetwork.maestro", 4), ("ApplePayPaymentNetwork.mada", 5),
      ("ApplePayPaymentNetwork.girocard", 11), ("ApplePayPaymentNetwork.dankort", 13), ("ApplePayPaymentNetwork.bancontact", 14),
      ("ApplePayPaymentNetwork.bankAxept", 15),
      ("merchantIdentifier", nil), ("ApplePayShippingMethod.selected", nil), ("ApplePayLineItem.isPending", nil),
    ]
    for (path, version) in expected {
      #expect(ApplePayJSSchema.introducedIn(member: path) == version, "\(path)")
    }
  }

  // MARK: - Valid requests

  @Test("a minimal version-3 request validates at every version", arguments: Array(3...14))
  func minimalValidatesEverywhere(version: Int) {
    #expect(ApplePayJSSchema.validate(Self.plain, version: version) == [])
    #expect(ApplePayJSSchema.validate(Self.fullVersion3, version: version) == [])
  }

  @Test("the lowest accepting version of the version-3 requests is 3")
  func lowestOfVersion3() {
    #expect(ApplePayJSSchema.lowestAcceptingVersion(Self.plain) == 3)
    #expect(ApplePayJSSchema.lowestAcceptingVersion(Self.fullVersion3) == 3)
  }

  @Test("Apple's examples validate from their introducing version and fail the version before, naming the member", arguments: examples)
  func examplesAtTheirVersion(example: Example) {
    for version in example.version...14 {
      #expect(ApplePayJSSchema.validate(example.request, version: version) == [], "at \(version)")
    }
    #expect(ApplePayJSSchema.validate(example.request, version: example.version - 1) == example.problemsBefore)
    #expect(ApplePayJSSchema.lowestAcceptingVersion(example.request) == example.version)
    for version in 3..<example.version {
      #expect(!ApplePayJSSchema.validate(example.request, version: version).isEmpty, "at \(version)")
    }
  }

  @Test("a version outside 3...14 is a problem")
  func outsideRange() {
    #expect(ApplePayJSSchema.validate(Self.plain, version: 2) == ["$: Apple Pay JS version 2 is outside 3...14"])
    #expect(ApplePayJSSchema.validate(Self.plain, version: 15) == ["$: Apple Pay JS version 15 is outside 3...14"])
  }

  // MARK: - Invalid requests

  @Test("unknown members fail, at every level")
  func unknownMembers() {
    // merchantIdentifier belongs to the Payment Request API's ApplePayRequest, not to ApplePayPaymentRequest.
    #expect(
      ApplePayJSSchema.validate(Self.with(Self.plain, [("merchantIdentifier", #""merchant.com.example""#)]), version: 14)
        == ["$.merchantIdentifier: no value is allowed here"])
    #expect(
      ApplePayJSSchema.validate(Self.with(Self.plain, [("total", #"{"label": "Shop", "amount": "1.00", "isPending": true}"#)]), version: 14)
        == ["$.total.isPending: no value is allowed here"])
    #expect(
      ApplePayJSSchema.validate(
        Self.with(Self.plain, [("shippingMethods", #"[{"label": "A", "detail": "B", "amount": "1.00", "identifier": "a", "selected": true}]"#)]),
        version: 14) == ["$.shippingMethods[0].selected: no value is allowed here"])
    #expect(
      ApplePayJSSchema.validate(Self.with(Self.plain, [("billingContact", #"{"givenName": "Ann", "nickname": "A"}"#)]), version: 3)
        == ["$.billingContact.nickname: no value is allowed here"])
    guard case .object(var deferred) = Self.preOrder["deferredPaymentRequest"] else {
      Issue.record("no deferred request")
      return
    }
    deferred.members.append(("cancellationPolicy", .string("free")))
    #expect(
      ApplePayJSSchema.validate(Self.with(Self.preOrder, [("deferredPaymentRequest", JSONWriter.string(JSONValue.object(deferred)))]), version: 14)
        == ["$.deferredPaymentRequest.cancellationPolicy: no value is allowed here"])
  }

  @Test("wrong enumeration values fail")
  func wrongEnumValues() {
    #expect(
      ApplePayJSSchema.validate(Self.with(Self.plain, [("shippingType", #""pickup""#)]), version: 14)
        == [#"$.shippingType: must be one of ["shipping","delivery","storePickup","servicePickup"]"#])
    #expect(
      ApplePayJSSchema.validate(Self.with(Self.plain, [("merchantCapabilities", #"["supports3DS", "supportsCreditCards"]"#)]), version: 14)
        == [#"$.merchantCapabilities[1]: must be one of ["supports3DS","supportsEMV","supportsCredit","supportsDebit"]"#])
    #expect(
      ApplePayJSSchema.validate(Self.with(Self.plain, [("requiredShippingContactFields", #"["address"]"#)]), version: 14)
        == [#"$.requiredShippingContactFields[0]: must be one of ["email","name","phone","postalAddress","phoneticName"]"#])
    #expect(
      ApplePayJSSchema.validate(Self.with(Self.plain, [("shippingContactEditingMode", #""readOnly""#)]), version: 14)
        == [#"$.shippingContactEditingMode: must be one of ["available","enabled","storePickup"]"#])
    #expect(
      ApplePayJSSchema.validate(Self.with(Self.plain, [("total", #"{"label": "Shop", "amount": "1.00", "type": "estimated"}"#)]), version: 14)
        == [#"$.total.type: must be one of ["final","pending"]"#])
    #expect(
      ApplePayJSSchema.validate(
        Self.with(Self.plain, [("lineItems", #"[{"label": "Plan", "amount": "1.00", "paymentTiming": "monthly", "recurringPaymentIntervalUnit": "week"}]"#)]),
        version: 14) == [
          #"$.lineItems[0].paymentTiming: must be one of ["immediate","recurring","deferred","automaticReload"]"#,
          #"$.lineItems[0].recurringPaymentIntervalUnit: must be one of ["year","month","day","hour","minute"]"#,
        ])
  }

  @Test("networks and contact fields are restricted per version")
  func enumValuesPerVersion() {
    let dankort = Self.with(Self.plain, [("supportedNetworks", #"["visa", "dankort"]"#)])
    #expect(ApplePayJSSchema.validate(dankort, version: 13) == [])
    #expect(
      ApplePayJSSchema.validate(dankort, version: 12) == [
        #"$.supportedNetworks[1]: must be one of ["amex","chinaUnionPay","discover","interac","masterCard","privateLabel","visa","jcb","cartesBancaires","eftpos","electron","maestro","vPay","elo","mada","mir","girocard"]"#
      ])
    #expect(ApplePayJSSchema.lowestAcceptingVersion(dankort) == 13)
    #expect(ApplePayJSSchema.lowestAcceptingVersion(Self.with(Self.plain, [("supportedNetworks", #"["maestro"]"#)])) == 4)
    #expect(ApplePayJSSchema.lowestAcceptingVersion(Self.with(Self.plain, [("supportedNetworks", #"["mada"]"#)])) == 5)
    #expect(ApplePayJSSchema.lowestAcceptingVersion(Self.with(Self.plain, [("supportedNetworks", #"["girocard"]"#)])) == 11)
    #expect(ApplePayJSSchema.lowestAcceptingVersion(Self.with(Self.plain, [("supportedNetworks", #"["bancomat"]"#)])) == 14)
    #expect(ApplePayJSSchema.lowestAcceptingVersion(Self.with(Self.plain, [("supportedNetworks", #"["bankAxept"]"#)])) == nil)
    #expect(ApplePayJSSchema.lowestAcceptingVersion(Self.with(Self.plain, [("requiredBillingContactFields", #"["phoneticName"]"#)])) == 3)
    #expect(ApplePayJSSchema.lowestAcceptingVersion(Self.with(Self.plain, [("supportedNetworks", #"[]"#)])) == nil)
  }

  @Test("a line item without a label fails")
  func lineItemWithoutLabel() {
    #expect(
      ApplePayJSSchema.validate(Self.with(Self.plain, [("lineItems", #"[{"label": "Tax", "amount": "0.10"}, {"amount": "1.00"}]"#)]), version: 3)
        == ["$.lineItems[1]: label is required"])
    #expect(
      ApplePayJSSchema.validate(Self.with(Self.plain, [("total", #"{"amount": "1.00"}"#)]), version: 14) == ["$.total: label is required"])
    #expect(
      ApplePayJSSchema.validate(Self.with(Self.plain, [("total", #"{"amount": "1.00"}"#)]), version: 3) == ["$.total: label is required"])
  }

  @Test("required members, amounts, dates and counts")
  func valuesAndRequiredMembers() {
    guard case .object(var withoutCurrency) = Self.plain else {
      Issue.record("not an object")
      return
    }
    withoutCurrency.members.removeAll { $0.key == "currencyCode" }
    #expect(ApplePayJSSchema.validate(.object(withoutCurrency), version: 14) == ["$: currencyCode is required"])
    #expect(
      ApplePayJSSchema.validate(Self.with(Self.plain, [("total", #"{"label": "Shop", "amount": 1.99}"#)]), version: 14)
        == ["$.total.amount: must be string, got a number"])
    #expect(
      ApplePayJSSchema.validate(Self.with(Self.plain, [("total", #"{"label": "Shop", "amount": "1,99"}"#)]), version: 14)
        == [#"$.total.amount: "1,99" does not match ^-?[0-9]+(\.[0-9]+)?$"#])
    #expect(ApplePayJSSchema.validate(Self.with(Self.plain, [("countryCode", #""usa""#)]), version: 14) == [#"$.countryCode: "usa" does not match ^[A-Z]{2}$"#])
    #expect(
      ApplePayJSSchema.validate(Self.with(Self.plain, [("merchantCapabilities", #"["supportsCredit"]"#)]), version: 14)
        == [#"$.merchantCapabilities: must not match {"items":{"not":{"const":"supports3DS"}}}"#])
    let badDates = Self.with(Self.plain, [
      ("lineItems", #"[{"label": "Plan", "amount": "4.99", "paymentTiming": "recurring", "recurringPaymentStartDate": "2026-01-01", "recurringPaymentIntervalCount": 0}]"#)
    ])
    #expect(
      ApplePayJSSchema.validate(badDates, version: 14) == [
        "$.lineItems[0].recurringPaymentStartDate: \"2026-01-01\" does not match \(ApplePayJSSchema.datePattern)",
        "$.lineItems[0].recurringPaymentIntervalCount: minimum 1, got 0",
      ])
    #expect(
      ApplePayJSSchema.validate(Self.with(Self.plain, [("shippingMethods", #"[{"label": "Free", "amount": "0.00", "identifier": "free"}]"#)]), version: 3)
        == ["$.shippingMethods[0]: detail is required"])
  }

  @Test("a zero total needs version 4")
  func zeroTotal() {
    let zero = Self.with(Self.plain, [("total", #"{"label": "Free sample", "amount": "0.00"}"#)])
    #expect(
      ApplePayJSSchema.validate(zero, version: 3)
        == [#"$.total.amount: "0.00" does not match ^(0*[1-9][0-9]*(\.[0-9]+)?|0*\.[0-9]*[1-9][0-9]*)$"#])
    #expect(ApplePayJSSchema.validate(zero, version: 4) == [])
    #expect(ApplePayJSSchema.lowestAcceptingVersion(zero) == 4)
    #expect(ApplePayJSSchema.validate(Self.with(Self.plain, [("total", #"{"label": "Cents", "amount": "0.50"}"#)]), version: 3) == [])
  }

  @Test("billing line items need their payment timing, and the merchant-token requests exclude each other")
  func merchantTokenRequests() {
    guard case .object(var recurring) = Self.subscription["recurringPaymentRequest"] else {
      Issue.record("no recurring request")
      return
    }
    recurring.members.removeAll { $0.key == "regularBilling" }
    recurring.members.append(("regularBilling", Self.parse(#"{"label": "Monthly plan", "amount": "4.99", "paymentTiming": "immediate"}"#)))
    #expect(
      ApplePayJSSchema.validate(Self.with(Self.subscription, [("recurringPaymentRequest", JSONWriter.string(JSONValue.object(recurring)))]), version: 14)
        == [#"$.recurringPaymentRequest.regularBilling.paymentTiming: must be "recurring""#])

    let both = Self.with(Self.subscription, [("deferredPaymentRequest", JSONWriter.string(Self.preOrder["deferredPaymentRequest"] ?? .null))])
    #expect(
      ApplePayJSSchema.validate(both, version: 14)
        == [#"$: must not match {"required":["recurringPaymentRequest","deferredPaymentRequest"]}"#])

    guard case .object(var deferred) = Self.preOrder["deferredPaymentRequest"] else {
      Issue.record("no deferred request")
      return
    }
    deferred.members.removeAll { $0.key == "freeCancellationDateTimeZone" }
    let problems = ApplePayJSSchema.validate(
      Self.with(Self.preOrder, [("deferredPaymentRequest", JSONWriter.string(JSONValue.object(deferred)))]), version: 14)
    #expect(problems.count == 1)
    #expect(problems.first?.hasPrefix("$.deferredPaymentRequest: matches none of anyOf (") == true)
    #expect(problems.first?.contains("freeCancellationDateTimeZone is required") == true)
  }
}
