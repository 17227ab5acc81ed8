@testable import PayServiceCore
import Testing

@Suite("Addresses of every country")
struct AddressFormatTests {
  static let validator = ContactValidator(shipsTo: Array(AddressFormat.byCountry.keys) + ["FR", "ZW"])

  /// A known area of each country that requires one.
  static let areas = ["US": "CA", "CA": "ON", "AU": "NSW", "CN": "广东省", "JP": "東京都", "IT": "RM"]

  static func contact(_ country: String, postal: String?, area: String? = nil, locality: String? = "Town") -> Contact {
    var contact = Contact()
    contact.addressLines = ["1 High Street"]
    contact.locality = locality
    contact.postalCode = postal
    contact.administrativeArea = area ?? areas[country]
    contact.countryCode = country
    return contact
  }

  static func fields(_ errors: [ApplePayError]) -> [ApplePayError.ContactField?] { errors.map(\.contactField) }

  @Test("every shipped country: its own example is a valid postal code, and a longer one is not")
  func everyCountry() {
    #expect(AddressFormat.byCountry.count == 43)
    for (country, format) in AddressFormat.byCountry.sorted(by: { $0.key < $1.key }) {
      if format.postalForms.isEmpty {
        // No postal codes: none is asked for, at authorization either.
        #expect(Self.validator.addressErrors(Self.contact(country, postal: nil), role: .shipping, complete: true).isEmpty, "\(country)")
        continue
      }
      #expect(format.acceptsPostalCode(format.postalExample, redactedAllowed: false), "\(country) \(format.postalExample)")
      #expect(
        Self.validator.addressErrors(Self.contact(country, postal: format.postalExample), role: .shipping, complete: true).isEmpty,
        "\(country)")
      let invalid = format.postalExample + "Z"
      #expect(!format.acceptsPostalCode(invalid, redactedAllowed: true), "\(country) \(invalid)")
      let errors = Self.validator.addressErrors(Self.contact(country, postal: invalid), role: .billing, complete: true)
      #expect(errors == [ApplePayError(.billingContactInvalid, .postalCode, format.postalCodeMessage)], "\(country)")
      #expect(format.postalCodeMessage.contains(format.postalExample), "\(country)")
    }
  }

  @Test("messages name the country's own example")
  func messages() {
    let gb = Self.validator.addressErrors(Self.contact("GB", postal: "SW1A-1AA"), role: .shipping, complete: true)
    #expect(gb == [ApplePayError(.shippingContactInvalid, .postalCode, "Enter a postcode like SW1A 1AA.")])
    let jp = Self.validator.addressErrors(Self.contact("JP", postal: "1000001", area: "Gotham"), role: .shipping, complete: true)
    #expect(
      jp == [
        ApplePayError(.shippingContactInvalid, .postalCode, "Enter a postal code like 100-0001."),
        ApplePayError(.shippingContactInvalid, .administrativeArea, "Enter a prefecture, like 東京都 or Tokyo."),
      ])
  }

  @Test("what the sheet redacts is accepted before authorization and refused at it where the full field is needed")
  func redactedForms() {
    for (country, redacted, full) in [("GB", "SW1A", "SW1A 1AA"), ("CA", "K1A", "K1A 0B1"), ("JP", "100", "100-0001")] {
      let sheet = Self.contact(country, postal: redacted, locality: nil)
      #expect(Self.validator.addressErrors(sheet, role: .shipping, complete: false).isEmpty, "\(country)")
      #expect(
        Self.fields(Self.validator.addressErrors(Self.contact(country, postal: redacted), role: .shipping, complete: true))
          == [.postalCode], "\(country)")
      #expect(Self.validator.addressErrors(Self.contact(country, postal: full), role: .shipping, complete: true).isEmpty)
    }
    // Hong Kong has no postal codes; the district is in the city.
    #expect(Self.validator.addressErrors(Self.contact("HK", postal: nil, locality: "Kowloon"), role: .shipping, complete: true).isEmpty)
    #expect(Self.validator.addressErrors(Self.contact("HK", postal: nil, locality: nil), role: .shipping, complete: false).isEmpty)
    // Japan's sheet contact often has no city: fine until authorization, which needs it.
    let noCity = Self.contact("JP", postal: "100", locality: nil)
    #expect(Self.validator.addressErrors(noCity, role: .shipping, complete: false).isEmpty)
    #expect(Self.fields(Self.validator.addressErrors(Self.contact("JP", postal: "100-0001", locality: nil), role: .shipping, complete: true)) == [.locality])
    // A field the sheet left out is asked for at authorization only (US and Canada always check).
    #expect(Self.validator.addressErrors(Self.contact("DE", postal: nil), role: .shipping, complete: false).isEmpty)
    #expect(Self.fields(Self.validator.addressErrors(Self.contact("DE", postal: nil), role: .shipping, complete: true)) == [.postalCode])
  }

  @Test("administrative areas: names, codes, short forms and pinyin where countries use them")
  func areas() {
    func ok(_ country: String, _ area: String, _ postal: String) -> Bool {
      Self.validator.addressErrors(Self.contact(country, postal: postal, area: area), role: .shipping, complete: true).isEmpty
    }
    for area in ["广东省", "广东", "Guangdong", "GUANGDONG", "北京市", "Xizang", "新疆维吾尔自治区"] { #expect(ok("CN", area, "510000"), "\(area)") }
    for area in ["東京都", "Tokyo", "13", "01", "1", "北海道", "Okinawa"] { #expect(ok("JP", area, "100-0001"), "\(area)") }
    for area in ["NSW", "Victoria", "act"] { #expect(ok("AU", area, "2000"), "\(area)") }
    for area in ["RM", "mi", "SU"] { #expect(ok("IT", area, "00184"), "\(area)") }
    for (country, area, postal) in [("CN", "Gotham", "510000"), ("JP", "48", "100-0001"), ("AU", "Sydney", "2000"), ("IT", "Roma", "00184")] {
      #expect(!ok(country, area, postal), "\(country) \(area)")
    }
    // Countries without a rule keep the generic check.
    #expect(Self.fields(Self.validator.addressErrors(Self.contact("ZW", postal: nil), role: .shipping, complete: true)) == [.postalCode])
    #expect(Self.validator.addressErrors(Self.contact("ZW", postal: "anything at all"), role: .shipping, complete: true).isEmpty)
  }
}
