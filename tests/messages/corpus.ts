/**
 * Hand-written mails in the style of real services (sign-up and sign-in codes,
 * password resets, magic links, receipts, shipping notices, newsletters), each
 * with the codes and links a person would find in it. The extractor is scored
 * against these; expectations were written from the mail, not from its output.
 */
import type { Link, MailContent } from "../../src/messages/extract/mod.ts";

/** A corpus mail and what should be extracted from it. */
export interface CorpusMail extends MailContent {
  name: string;
  codes: string[];
  links: Link[];
}

export const corpus: CorpusMail[] = [
  {
    name: "github device verification (text only)",
    subject: "[GitHub] Please verify your device",
    text: `Hey octocat!

A sign in attempt requires further verification because we did not recognize your device. To complete the sign in, enter the verification code on the unrecognized device.

Device: Chrome on macOS
Verification code: 482913

If you did not attempt to sign in to your account, your password may be compromised. Visit https://github.com/settings/security to create a new, strong password for your GitHub account.

If you'd like to automatically verify devices in the future, consider enabling two-factor authentication on your account. Visit https://docs.github.com/articles/configuring-two-factor-authentication to learn about two-factor authentication.

If you decide to enable two-factor authentication, ensure you retain access to one or more account recovery methods. See https://docs.github.com/articles/securing-your-account-with-two-factor-authentication-2fa in the GitHub Help.

Thanks,
The GitHub Team
`,
    html: null,
    codes: ["482913"],
    links: [
      { url: "https://github.com/settings/security", text: null },
      { url: "https://docs.github.com/articles/configuring-two-factor-authentication", text: null },
      { url: "https://docs.github.com/articles/securing-your-account-with-two-factor-authentication-2fa", text: null },
    ],
  },
  {
    name: "slack confirmation code with hyphen (html only, code also in subject)",
    subject: "Slack confirmation code: 284-913",
    text: null,
    html: `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Slack confirmation code: 284-913</title>
<style>
  body { font-family: Lato, sans-serif; color: #1D1C1D; }
  .code { font-size: 40px; letter-spacing: 6px; background: #F4EDE4; }
  @media (max-width: 600px) { .wrap { width: 100% !important; } }
</style></head>
<body>
<table width="600" class="wrap" role="presentation">
  <tr><td><img src="https://a.slack-edge.com/80588/marketing/img/meta/slack_hash_128.png" alt="Slack" width="120" height="36"></td></tr>
  <tr><td><h1>Confirm your email address</h1></td></tr>
  <tr><td><p>Your confirmation code is below — enter it in your open browser window and we'll help you get signed in.</p></td></tr>
  <tr><td class="code" style="font-size:40px;letter-spacing:6px">284-913</td></tr>
  <tr><td><p>If you didn’t request this email, there’s nothing to worry about — you can safely ignore it.</p></td></tr>
  <tr><td>
    <a href="https://slack.com/help">Help Center</a> |
    <a href="https://slack.com/legal">Privacy Policy</a> |
    <a href="https://slack.com/signup">Sign up for Slack</a>
  </td></tr>
  <tr><td style="color:#696969;font-size:12px">©2024 Slack Technologies, LLC, a Salesforce company. 415 Mission Street, 3rd Floor, San Francisco, CA 94105</td></tr>
</table>
</body></html>`,
    codes: ["284913"],
    links: [
      { url: "https://slack.com/help", text: "Help Center" },
      { url: "https://slack.com/legal", text: "Privacy Policy" },
      { url: "https://slack.com/signup", text: "Sign up for Slack" },
    ],
  },
  {
    name: "linear sign-up code with a space (text only)",
    subject: "Your Linear sign-up code",
    text: `Welcome to Linear!

To finish creating your workspace, enter this code in the sign-up window:

731 604

The code expires in 15 minutes and can only be used once.

Didn't try to sign up? You can ignore this email. Someone may have typed your address by mistake.

Linear Orbit, Inc.
2261 Market Street #4023, San Francisco, CA 94114
https://linear.app
`,
    html: null,
    codes: ["731604"],
    links: [{ url: "https://linear.app", text: null }],
  },
  {
    name: "notion alphanumeric login code and magic link (multipart)",
    subject: "Your temporary Notion login code is K7Q2ZP",
    text: `Notion

Here is your temporary login code:

K7Q2ZP

Or sign in with this magic link: https://www.notion.so/loginwithemail?state=Yk3xT0&token=d41f9c2e7b

If you didn't try to log in, you can safely ignore this email.

Hint: You can set a permanent password in Settings & members → My account.

Notion Labs, Inc., 2300 Harrison Street, San Francisco, CA 94110
`,
    html: `<html><head><style>code { font-size: 24px; padding: 16px 4px; background-color: #F4F4F4; }</style></head>
<body style="font-family:-apple-system, sans-serif;color:#333">
<img src="https://www.notion.so/images/logo-ios.png" alt="Notion" width="32" height="32">
<h2>Log in to Notion</h2>
<p><a href="https://www.notion.so/loginwithemail?state=Yk3xT0&amp;token=d41f9c2e7b" style="color:#2EAADC">Click here to log in with this magic link</a></p>
<p>Or, copy and paste this temporary login code:</p>
<code style="display:inline-block;padding:16px 4px;font-size:24px">K7Q2ZP</code>
<p style="color:#AAAAAA">If you didn't try to log in, you can safely ignore this email.</p>
<p style="color:#AAAAAA">Hint: You can set a permanent password in Settings &amp; members → My account.</p>
<p><a href="https://www.notion.so" style="color:#B4B4B4">Notion.so</a>, the connected workspace<br>for docs, projects, and wikis.</p>
</body></html>`,
    codes: ["K7Q2ZP"],
    links: [
      {
        url: "https://www.notion.so/loginwithemail?state=Yk3xT0&token=d41f9c2e7b",
        text: "Click here to log in with this magic link",
      },
      { url: "https://www.notion.so", text: "Notion.so" },
    ],
  },
  {
    name: "stripe sign-in code with sign-in details (text only)",
    subject: "Your Stripe verification code",
    text: `Hi Jordan,

Use the following verification code to finish signing in to your Stripe account:

559 102

This code will expire in 10 minutes. For your security, never share this code with anyone — Stripe will never ask you for it.

Sign-in details
Time: May 2, 2024, 14:07 UTC
Browser: Firefox 125.0 on Windows 10
Location: Dublin, Ireland (IP 198.51.100.77)

If this wasn't you, reset your password immediately: https://dashboard.stripe.com/reset?email=jordan%40example.com

Stripe, 354 Oyster Point Blvd, South San Francisco, CA 94080
`,
    html: null,
    codes: ["559102"],
    links: [{ url: "https://dashboard.stripe.com/reset?email=jordan%40example.com", text: null }],
  },
  {
    name: "bank 4-digit one-time PIN with phone numbers (text only)",
    subject: "Your one-time PIN",
    text: `Northwind Bank

Dear customer,

Your one-time PIN for online banking is 4827.

It is valid for 5 minutes. Do not share this PIN with anyone, including Northwind Bank staff.

Card ending in 3391 | Request made 03/05/2024 at 08:42

Questions? Call us on 0800 123 4567 (free from UK landlines) or +44 20 7946 0958 from abroad.

Northwind Bank plc, 1 Churchill Place, London E14 5HP. Registered in England No. 02065.
`,
    html: null,
    codes: ["4827"],
    links: [],
  },
  {
    name: "microsoft 8-digit security code (multipart)",
    subject: "Microsoft account security code",
    text: `Microsoft account

Security code

Please use the following security code for the Microsoft account ja***@example.com.

Security code: 83920175

If you don't recognize the Microsoft account ja***@example.com, you can click https://account.live.com/dp?ft=Dq4b%21Ms0&mkt=en-US to remove your email address from that account.

Thanks,
The Microsoft account team
`,
    html: `<html><body style="font-family:'Segoe UI',Tahoma,sans-serif">
<table dir="ltr"><tr><td style="font-size:17px;color:#707070">Microsoft account</td></tr>
<tr><td style="font-size:41px;color:#2672EC">Security code</td></tr>
<tr><td style="padding-top:25px;font-size:14px;color:#2A2A2A">Please use the following security code for the Microsoft account <a dir="ltr" style="color:#2672EC;text-decoration:none" href="mailto:ja***@example.com">ja***@example.com</a>.</td></tr>
<tr><td style="padding-top:25px;font-size:14px;color:#2A2A2A">Security code: <span style="font-size:14px;font-weight:bold;color:#2A2A2A">83920175</span></td></tr>
<tr><td style="padding-top:25px;font-size:14px;color:#2A2A2A">If you don't recognize the Microsoft account ja***@example.com, you can <a href="https://account.live.com/dp?ft=Dq4b%21Ms0&amp;mkt=en-US" style="color:#2672EC">click here</a> to remove your email address from that account.</td></tr>
<tr><td style="padding-top:25px;font-size:14px">Thanks,<br>The Microsoft account team</td></tr>
<tr><td style="font-size:12px;color:#707070"><a href="https://go.microsoft.com/fwlink/?LinkId=521839">Privacy Statement</a><br>Microsoft Corporation, One Microsoft Way, Redmond, WA 98052</td></tr>
</table></body></html>`,
    codes: ["83920175"],
    links: [
      { url: "https://account.live.com/dp?ft=Dq4b%21Ms0&mkt=en-US", text: "click here" },
      { url: "https://go.microsoft.com/fwlink/?LinkId=521839", text: "Privacy Statement" },
    ],
  },
  {
    name: "password reset magic link with &amp; in the href (multipart, no code)",
    subject: "Reset your Acme password",
    text: `Hi Sam,

Someone (hopefully you) asked to reset the password for your Acme account.

Reset password: https://app.acme.io/reset-password?token=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI0ODIxIn0.Qm9v&email=sam%40example.com&utm_source=transactional&utm_medium=email

This link expires in 60 minutes and can be used once. The request came from IP 203.0.113.9 at 10:42 on 2024-05-03.

If you didn't ask for this, ignore this email; your password stays the same.

— Acme Support (https://help.acme.io)
`,
    html: `<!doctype html>
<html><head><style>.btn{background:#4F46E5;color:#FFFFFF;padding:12px 24px;border-radius:6px}</style></head>
<body>
<div style="display:none;max-height:0;overflow:hidden">Reset link inside, valid for 60 minutes.</div>
<table role="presentation" width="100%"><tr><td align="center">
<table width="480">
<tr><td><img src="https://cdn.acme.io/email/logo@2x.png" width="96" alt="Acme"></td></tr>
<tr><td><h1 style="font-size:22px">Reset your password</h1></td></tr>
<tr><td><p>Hi Sam,</p><p>Someone (hopefully you) asked to reset the password for your Acme account.</p></td></tr>
<tr><td align="center"><a class="btn" href="https://app.acme.io/reset-password?token=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI0ODIxIn0.Qm9v&amp;email=sam%40example.com&amp;utm_source=transactional&amp;utm_medium=email">
  Reset password
</a></td></tr>
<tr><td><p style="color:#6B7280">This link expires in 60 minutes and can be used once. The request came from IP 203.0.113.9 at 10:42 on 2024-05-03.</p></td></tr>
<tr><td><p style="color:#6B7280">Need help? <a href="https://help.acme.io">Visit the help center</a> or <a href="mailto:support@acme.io">email us</a>.</p></td></tr>
</table></td></tr></table>
</body></html>`,
    codes: [],
    links: [
      {
        url:
          "https://app.acme.io/reset-password?token=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI0ODIxIn0.Qm9v&email=sam%40example.com&utm_source=transactional&utm_medium=email",
        text: "Reset password",
      },
      { url: "https://help.acme.io", text: "Visit the help center" },
    ],
  },
  {
    name: "password reset through a click-tracking redirect (multipart, no code)",
    subject: "Reset your Figma password",
    text: `Figma

We received a request to reset your password.

Reset your password here:
https://www.figma.com/reset_password?token=fz_84bd2c1e9a0f4d7b&email=lee%40example.com

If you didn't request a password reset, you can ignore this email.

Figma, Inc. 760 Market Street, Floor 10, San Francisco, CA 94102
`,
    html: `<html><body style="background:#FFFFFF">
<table width="100%" cellpadding="0" cellspacing="0"><tr><td align="center">
<table width="560" style="font-family:Inter,Helvetica,Arial">
<tr><td><a href="https://u2319841.ct.sendgrid.net/ls/click?upn=u001.oW5d8Gk2sL-2FqZ1mP0bV7xN3tR9yE4aH6cJ8kM2oQ-3D-3DrT4u_Xy2Bq9Lm3Kp7Wn1Zc5Vd8Hf0Gj6"><img src="https://static.figma.com/uploads/email/figma-logo.png" alt="Figma" width="24"></a></td></tr>
<tr><td style="font-size:16px;line-height:24px">We received a request to reset your password.</td></tr>
<tr><td><a href="https://u2319841.ct.sendgrid.net/ls/click?upn=u001.oW5d8Gk2sL-2FqZ1mP0bV7xN3tR9yE4aH6cJ8kM2oQ-3D-3DkP9s_Ab3Cd5Ef7Gh9Ij1Kl3Mn5&amp;upn2=r4Tz" style="background-color:#18A0FB;color:#FFF;padding:10px 16px">Reset password</a></td></tr>
<tr><td style="font-size:12px;color:#B3B3B3">If you didn't request a password reset, you can ignore this email.</td></tr>
<tr><td style="font-size:12px;color:#B3B3B3">Figma, Inc. 760 Market Street, Floor 10, San Francisco, CA 94102</td></tr>
</table></td></tr></table>
<img src="https://u2319841.ct.sendgrid.net/wf/open?upn=u001.Q9w8E7r6T5y4U3i2O1p0-2FaS-3D" alt="" width="1" height="1" border="0">
</body></html>`,
    codes: [],
    links: [
      {
        url:
          "https://u2319841.ct.sendgrid.net/ls/click?upn=u001.oW5d8Gk2sL-2FqZ1mP0bV7xN3tR9yE4aH6cJ8kM2oQ-3D-3DrT4u_Xy2Bq9Lm3Kp7Wn1Zc5Vd8Hf0Gj6",
        text: null,
      },
      {
        url:
          "https://u2319841.ct.sendgrid.net/ls/click?upn=u001.oW5d8Gk2sL-2FqZ1mP0bV7xN3tR9yE4aH6cJ8kM2oQ-3D-3DkP9s_Ab3Cd5Ef7Gh9Ij1Kl3Mn5&upn2=r4Tz",
        text: "Reset password",
      },
      { url: "https://www.figma.com/reset_password?token=fz_84bd2c1e9a0f4d7b&email=lee%40example.com", text: null },
    ],
  },
  {
    name: "supabase sign-up confirmation magic link (html only, no code)",
    subject: "Confirm Your Signup",
    text: null,
    html: `<h2>Confirm your signup</h2>

<p>Follow this link to confirm your user:</p>
<p><a href="https://xyzcompany.supabase.co/auth/v1/verify?token=pkce_4f1c2a9e8b7d6c5b4a3f2e1d&amp;type=signup&amp;redirect_to=https://app.example.com/welcome">Confirm your mail</a></p>
<p style="font-size:11px;color:#999999">Sent 2024-05-03 10:42:17 UTC · request 7d1e2f3a</p>
`,
    codes: [],
    links: [
      {
        url:
          "https://xyzcompany.supabase.co/auth/v1/verify?token=pkce_4f1c2a9e8b7d6c5b4a3f2e1d&type=signup&redirect_to=https://app.example.com/welcome",
        text: "Confirm your mail",
      },
    ],
  },
  {
    name: "slack magic sign-in link with numbers only inside URLs (text only)",
    subject: "Slack sign-in link for Acme HQ",
    text: `Sign in to Acme HQ on Slack

You asked us to send you a magic link for quickly signing in to your workspace acme-hq.slack.com. Your wish is our command!

https://acme-hq.slack.com/z-app-4821937-83920175?x=x-p4821937-5520193-9917204

This link expires in 24 hours and can only be used once. Visit <https://slack.com/help/articles/212681477> if you have trouble signing in.

Made by Slack Technologies, LLC
500 Howard Street | San Francisco, CA 94105
`,
    html: null,
    codes: [],
    links: [
      { url: "https://acme-hq.slack.com/z-app-4821937-83920175?x=x-p4821937-5520193-9917204", text: null },
      { url: "https://slack.com/help/articles/212681477", text: null },
    ],
  },
  {
    name: "shopify order confirmation with prices, address and phone (multipart, no code)",
    subject: "Order #1042 confirmed",
    text: `NORTHFIELD GOODS
ORDER #1042

Thank you for your purchase!
We're getting your order ready to be shipped. We will notify you when it has been sent.

View your order: https://northfield-goods.com/84213307/orders/8f3a2b1c9d5e?key=a91c7e2b4d

Order summary
Linen shirt × 2 — €89.90
Canvas tote × 1 — €24.00
Subtotal €113.90
Shipping €4.90
Total €118.80 EUR
You saved €12.00

Shipping address
Anna Schmidt
Torstraße 115
10119 Berlin
Germany
+49 30 1234567

Use discount code THANKS15 for 15% off your next order.

If you have any questions, reply to this email or contact us at hello@northfield-goods.com
`,
    html: `<html><head><style>
  .order-list__item-price { color: #555555; text-align: right; }
  .button__cell { background: #1990C6; }
  @media (max-width: 600px) { .container { width: 94% !important; } }
</style></head><body>
<table class="container" width="560"><tr><td>
<h1 style="font-size:24px"><a href="https://northfield-goods.com">Northfield Goods</a></h1>
<p style="text-transform:uppercase;color:#999">Order #1042</p>
<h2>Thank you for your purchase!</h2>
<p>We're getting your order ready to be shipped. We will notify you when it has been sent.</p>
<table><tr>
  <td class="button__cell"><a href="https://northfield-goods.com/84213307/orders/8f3a2b1c9d5e?key=a91c7e2b4d">View your order</a></td>
  <td>or <a href="https://northfield-goods.com">Visit our store</a></td>
</tr></table>
<h3>Order summary</h3>
<table class="order-list">
  <tr><td><img src="https://cdn.shopify.com/s/files/1/0842/1330/products/linen-shirt_compact_cropped.jpg?v=1714731240" alt="Linen shirt" width="60"></td><td>Linen shirt × 2</td><td class="order-list__item-price">€89.90</td></tr>
  <tr><td><img src="https://cdn.shopify.com/s/files/1/0842/1330/products/tote_compact_cropped.jpg?v=1714731240" alt="Canvas tote" width="60"></td><td>Canvas tote × 1</td><td class="order-list__item-price">€24.00</td></tr>
</table>
<table>
  <tr><td>Subtotal</td><td>€113.90</td></tr>
  <tr><td>Shipping</td><td>€4.90</td></tr>
  <tr><td><strong>Total</strong></td><td><strong style="font-size:24px">€118.80 EUR</strong></td></tr>
</table>
<h4>Shipping address</h4>
<p>Anna Schmidt<br>Torstraße 115<br>10119 Berlin<br>Germany<br>+49 30 1234567</p>
<p>Use discount code <strong>THANKS15</strong> for 15% off your next order.</p>
<p>If you have any questions, reply to this email or contact us at <a href="mailto:hello@northfield-goods.com">hello@northfield-goods.com</a></p>
</td></tr></table></body></html>`,
    codes: [],
    links: [
      { url: "https://northfield-goods.com", text: "Northfield Goods" },
      { url: "https://northfield-goods.com/84213307/orders/8f3a2b1c9d5e?key=a91c7e2b4d", text: "View your order" },
    ],
  },
  {
    name: "amazon order confirmation (text only, no code)",
    subject: "Your Amazon.com order #112-4839201-5562641",
    text: `Hello Sam,

Thank you for shopping with us. We'll send a confirmation when your item ships.

Details
Order #112-4839201-5562641
Arriving: Thursday, May 16
Ship to: Sam Taylor, 742 Evergreen Terrace, Springfield, OR 97477

Echo Dot (5th Gen) | Qty: 1 | $49.99
USB-C Cable 2m | Qty: 2 | $17.98

Order Total: $72.16

View or manage order: https://www.amazon.com/gp/css/order-details?orderID=112-4839201-5562641&ref_=pe_1234_5678

We hope to see you again soon.
Amazon.com
`,
    html: null,
    codes: [],
    links: [{
      url: "https://www.amazon.com/gp/css/order-details?orderID=112-4839201-5562641&ref_=pe_1234_5678",
      text: null,
    }],
  },
  {
    name: "stripe receipt with receipt number, card digits and phone (html only, no code)",
    subject: "Your receipt from Acme Cloud #1843-2210",
    text: null,
    html: `<html><body style="background-color:#F6F9FC">
<table width="100%"><tr><td align="center">
<table width="600" style="background:#FFFFFF">
  <tr><td style="font-size:24px;color:#32325D">Receipt from Acme Cloud</td></tr>
  <tr><td style="color:#8898AA">Receipt #1843-2210</td></tr>
  <tr>
    <td><span style="text-transform:uppercase;font-size:12px">Amount paid</span><br><span>$49.00</span></td>
    <td><span style="text-transform:uppercase;font-size:12px">Date paid</span><br><span>May 1, 2024</span></td>
    <td><span style="text-transform:uppercase;font-size:12px">Payment method</span><br><span><img src="https://stripe-images.s3.amazonaws.com/emails/receipt_assets/card/visa-dark@2x.png" alt="Visa" width="16"> Visa – 4242</span></td>
  </tr>
  <tr><td style="font-weight:bold">Summary</td></tr>
  <tr><td>Pro plan (Apr 30 – May 30, 2024) × 1</td><td>$49.00</td></tr>
  <tr><td>Amount paid</td><td style="font-weight:bold">$49.00</td></tr>
  <tr><td><a href="https://pay.stripe.com/receipts/payment/CAcaFwoVYWNjdF8xTjRrR2g?s=em&amp;pdf=1">Download receipt</a> · <a href="https://pay.stripe.com/invoice/acct_1N4kGh/live_YWNjdF8x/pdf?s=em">Download invoice</a></td></tr>
  <tr><td style="font-size:12px;color:#8898AA">If you have any questions, contact us at <a href="mailto:billing@acme.dev">billing@acme.dev</a> or call us at <a href="tel:+14155550132">+1 415-555-0132</a>.</td></tr>
  <tr><td style="font-size:12px;color:#8898AA">Something wrong with the email? <a href="https://pay.stripe.com/receipts/payment/CAcaFwoVYWNjdF8xTjRrR2g?s=em&amp;view=browser">View it in your browser</a>.</td></tr>
  <tr><td style="font-size:12px;color:#8898AA">You're receiving this email because you made a purchase at Acme Cloud, which partners with <a href="https://stripe.com">Stripe</a> to provide invoicing and payment processing.</td></tr>
</table></td></tr></table></body></html>`,
    codes: [],
    links: [
      { url: "https://pay.stripe.com/receipts/payment/CAcaFwoVYWNjdF8xTjRrR2g?s=em&pdf=1", text: "Download receipt" },
      { url: "https://pay.stripe.com/invoice/acct_1N4kGh/live_YWNjdF8x/pdf?s=em", text: "Download invoice" },
      {
        url: "https://pay.stripe.com/receipts/payment/CAcaFwoVYWNjdF8xTjRrR2g?s=em&view=browser",
        text: "View it in your browser",
      },
      { url: "https://stripe.com", text: "Stripe" },
    ],
  },
  {
    name: "ups delivery notice with tracking number (multipart, no code)",
    subject: "UPS Update: Package Scheduled for Delivery Tuesday, 05/14/2024",
    text: `UPS

Hello, your package will arrive:
Tuesday, 05/14/2024
Estimated time: 10:30 AM - 2:30 PM

Tracking Number: 1Z999AA10123456784
Ship To: BERLIN, DE 10115
Number of Packages: 1
UPS Service: UPS Standard
Weight: 2.30 LBS
Reference Number(s): PO 48213, INV 99021

Track your package: https://www.ups.com/track?loc=en_US&tracknum=1Z999AA10123456784&requester=ST/trackdetails

© 2024 United Parcel Service of America, Inc. UPS, the UPS brandmark, and the color brown are trademarks of United Parcel Service of America, Inc. All rights reserved.
`,
    html: `<html><head><style>.hdr{background-color:#351C15;color:#FFB500}</style></head><body>
<table width="600"><tr><td class="hdr"><img src="https://www.ups.com/assets/resources/images/UPS_logo.svg" alt="UPS" width="40"></td></tr>
<tr><td><p>Hello, your package will arrive:</p><h2>Tuesday, 05/14/2024</h2><p>Estimated time: 10:30 AM - 2:30 PM</p></td></tr>
<tr><td><table>
  <tr><td>Tracking Number:</td><td><a href="https://www.ups.com/track?loc=en_US&amp;tracknum=1Z999AA10123456784&amp;requester=ST/trackdetails"><strong>1Z999AA10123456784</strong></a></td></tr>
  <tr><td>Ship To:</td><td>BERLIN, DE 10115</td></tr>
  <tr><td>Number of Packages:</td><td>1</td></tr>
  <tr><td>Weight:</td><td>2.30 LBS</td></tr>
  <tr><td>Reference Number(s):</td><td>PO 48213, INV 99021</td></tr>
</table></td></tr>
<tr><td><a href="https://www.ups.com/mychoice?loc=en_US&amp;tracknum=1Z999AA10123456784" title="Change delivery 48213">Change Delivery</a></td></tr>
<tr><td style="font-size:10px">© 2024 United Parcel Service of America, Inc. All rights reserved.</td></tr>
</table></body></html>`,
    codes: [],
    links: [
      {
        url: "https://www.ups.com/track?loc=en_US&tracknum=1Z999AA10123456784&requester=ST/trackdetails",
        text: "1Z999AA10123456784",
      },
      { url: "https://www.ups.com/mychoice?loc=en_US&tracknum=1Z999AA10123456784", text: "Change Delivery" },
    ],
  },
  {
    name: "dhl parcel notice in German (text only, no code)",
    subject: "Ihre DHL Sendung kommt heute",
    text: `Hallo Max Mustermann,

Ihre Sendung 00340434161094042557 kommt heute zwischen 10:30 und 13:30 Uhr.

Absender: Zalando SE
Sendungsnummer: 00340434161094042557
Gewicht: 1,2 kg

Nicht zu Hause? Wir liefern Ihr Paket in die Packstation 142 oder an die Filiale:
Deutsche Post Filiale 518, Friedrichstraße 123, 10117 Berlin

Sendung verfolgen: https://www.dhl.de/de/privatkunden/pakete-empfangen/verfolgen.html?piececode=00340434161094042557

Ihr DHL Team

Deutsche Post AG, Charles-de-Gaulle-Straße 20, 53113 Bonn
`,
    html: null,
    codes: [],
    links: [
      {
        url: "https://www.dhl.de/de/privatkunden/pakete-empfangen/verfolgen.html?piececode=00340434161094042557",
        text: null,
      },
    ],
  },
  {
    name: "substack newsletter full of decoy numbers (multipart, no code)",
    subject: "The 2024 State of Remote Work: 35% more async, $12k saved per hire",
    text: `View this post on the web at https://remotely.substack.com/p/state-of-remote-work-2024

We surveyed 2,314 founders across 41 countries between January 8 and February 29, 2024. Here is what changed since 2023.

1. Async is the default
61% of teams now run a weekly written update instead of a stand-up, up from 45% in 2023.

2. Hiring got cheaper
Remote-first startups report spending $12,400 less per hire, and the median time-to-offer fell to 18 days.

Join our live Q&A on May 21 at 17:00 CET (11:00 ET). Dial-in: +1 646 558 8656, meeting ID 894 5521 3307.

Get 20% off an annual plan with code REMOTE24 until May 31.

Unsubscribe https://remotely.substack.com/action/disable_email?token=eyJ1c2VyX2lkIjo0ODIxOTM3fQ&expires=1717200000
© 2024 Priya Raman
548 Market Street PMB 72296, San Francisco, CA 94104
`,
    html: `<!DOCTYPE html><html><head><meta charset="UTF-8">
<title>The 2024 State of Remote Work</title>
<style>
  .post { max-width: 550px; color: #363737; }
  .button { background-color: #FF6719; border-radius: 4px; }
  .footer { color: #868787; font-size: 13px; }
  h1 { color: #1A1A1A; }
</style>
</head>
<body>
<div class="preview" style="display:none;max-height:0;overflow:hidden">Plus: 12 tools we tried in 2024 and the 3 we kept</div>
<table class="post" role="presentation" width="100%">
<tr><td>
  <h1><a href="https://remotely.substack.com/p/state-of-remote-work-2024?utm_source=substack&amp;utm_medium=email&amp;utm_campaign=email-post">The 2024 State of Remote Work</a></h1>
  <p class="byline">Priya Raman · May 3, 2024 · 8 min read</p>
  <!-- tracking: campaign 884213, segment 551029 -->
  <p>We surveyed 2,314 founders across 41 countries between January 8 and February 29, 2024. Here is what changed since 2023.</p>
  <img src="https://substackcdn.com/image/fetch/w_1100,c_limit,f_auto/chart-2024.png" alt="Chart: 2024 async adoption 61% vs 2023 45%" title="Figure 1 (ID 739104)" data-attrs='{"id":581203,"height":1024}' width="550">
  <h2>1. Async is the default</h2>
  <p>61% of teams now run a weekly written update instead of a stand-up, up from 45% in 2023. The median team saves 3.5 hours per person per week.</p>
  <h2>2. Hiring got cheaper</h2>
  <p>Remote-first startups report spending $12,400 less per hire, and the median time-to-offer fell to 18 days. One founder told us: “We closed 14 roles in Q1 for under €9,000 in total.”</p>
  <blockquote>Our office lease ran until 2026. We gave it up in 2024 and nobody noticed. — CEO of a 120-person company</blockquote>
  <h2>3. The numbers</h2>
  <table>
    <tr><th>Metric</th><th>2023</th><th>2024</th></tr>
    <tr><td>Teams fully remote</td><td>38%</td><td>52%</td></tr>
    <tr><td>Avg. meetings per week</td><td>11.2</td><td>7.9</td></tr>
    <tr><td>Respondents</td><td>1,870</td><td>2,314</td></tr>
  </table>
  <p>Join our live Q&amp;A on May 21 at 17:00 CET (11:00 ET). Dial-in: +1 646 558 8656, meeting ID 894 5521 3307.</p>
  <p><a class="button" href="https://remotely.substack.com/subscribe?utm_source=post&amp;utm_campaign=email-cta&amp;r=2k9xq4" style="background-color:#FF6719">Subscribe for $8/month</a></p>
  <p>Get 20% off an annual plan with code <b>REMOTE24</b> until May 31.</p>
</td></tr>
<tr><td class="footer">
  <p><a href="https://remotely.substack.com/p/state-of-remote-work-2024/comments">Comment</a> · <a href="https://remotely.substack.com/p/state-of-remote-work-2024?action=share">Share</a></p>
  <p>© 2024 Priya Raman<br>548 Market Street PMB 72296, San Francisco, CA 94104</p>
  <p><a href="https://remotely.substack.com/action/disable_email?token=eyJ1c2VyX2lkIjo0ODIxOTM3fQ&amp;expires=1717200000">Unsubscribe</a></p>
  <p><a href="https://substack.com/signup?utm_source=substack&amp;utm_medium=email&amp;utm_content=footer"><img src="https://substackcdn.com/image/fetch/w_270/publish-button.png" alt="Start writing" width="135"></a></p>
</td></tr>
</table>
</body></html>`,
    codes: [],
    links: [
      {
        url:
          "https://remotely.substack.com/p/state-of-remote-work-2024?utm_source=substack&utm_medium=email&utm_campaign=email-post",
        text: "The 2024 State of Remote Work",
      },
      {
        url: "https://remotely.substack.com/subscribe?utm_source=post&utm_campaign=email-cta&r=2k9xq4",
        text: "Subscribe for $8/month",
      },
      { url: "https://remotely.substack.com/p/state-of-remote-work-2024/comments", text: "Comment" },
      { url: "https://remotely.substack.com/p/state-of-remote-work-2024?action=share", text: "Share" },
      {
        url: "https://remotely.substack.com/action/disable_email?token=eyJ1c2VyX2lkIjo0ODIxOTM3fQ&expires=1717200000",
        text: "Unsubscribe",
      },
      { url: "https://substack.com/signup?utm_source=substack&utm_medium=email&utm_content=footer", text: null },
      { url: "https://remotely.substack.com/p/state-of-remote-work-2024", text: null },
    ],
  },
  {
    name: "developer newsletter that talks about code (text only, no code)",
    subject: "Bytes #312: Node 22, code review bots and 4000 stars",
    text: `Bytes #312 — May 2, 2024

Node.js 22 is out
Node 22 ships require(esm) behind a flag, V8 12.4 and a stable WebSocket client. Read the release notes: https://nodejs.org/en/blog/announcements/v22-release-announce

Code review bots, ranked
We let five AI reviewers loose on 1200 pull requests. The best one caught 31% of the bugs; the worst left 4800 comments. Full write-up: https://bytes.dev/archives/312#code-review

Cool bits
- Bun 1.1.6 adds 2048-bit key support (https://bun.sh/blog/bun-v1.1.6).
- The source code of the original 1989 SimCity is now on GitHub: https://github.com/example/micropolis.
- TC39 meeting notes from 2024-04-09 are up.

Spot the bug
const total = items.reduce((sum, i) => sum + i.price, 0) * 1.19;
Answer in next week's issue.

You're receiving this because you signed up at bytes.dev. Unsubscribe: https://bytes.dev/unsubscribe?id=58213&list=4821
`,
    html: null,
    codes: [],
    links: [
      { url: "https://nodejs.org/en/blog/announcements/v22-release-announce", text: null },
      { url: "https://bytes.dev/archives/312#code-review", text: null },
      { url: "https://bun.sh/blog/bun-v1.1.6", text: null },
      { url: "https://github.com/example/micropolis", text: null },
      { url: "https://bytes.dev/unsubscribe?id=58213&list=4821", text: null },
    ],
  },
  {
    name: "retail sale newsletter with promo codes, SKUs and prices (html only, no code)",
    subject: "Spring Sale: 25% off everything + free shipping over €50",
    text: null,
    html: `<html><head><style type="text/css">
  .hero { background: #FCE4EC; color: #880E4F; }
  .price-old { text-decoration: line-through; color: #9E9E9E; }
  .cta { background-color: #D81B60; color: #FFFFFF; }
</style>
<!--[if mso]><style>.hero{background:#FCE4EC}</style><![endif]-->
</head><body>
<div style="display:none">Only until Sunday 23:59 — use SPRING24 at checkout</div>
<table width="640" align="center">
<tr><td class="hero" align="center">
  <img src="https://img.nordlicht-mode.example/campaigns/2024/spring/hero_1280x640.jpg" alt="Spring Sale 2024 – 25% off" width="640" height="320">
  <h1>Spring Sale: 25% off everything</h1>
  <p>Use code <strong style="font-size:22px">SPRING24</strong> at checkout. Valid until 31.03.2024, 23:59.</p>
  <a class="cta" href="https://www.nordlicht-mode.example/sale?utm_source=newsletter&amp;utm_medium=email&amp;utm_campaign=spring24&amp;cid=48213">Shop the sale</a>
</td></tr>
<tr><td><table><tr>
  <td data-sku="558201" align="center">
    <a href="https://www.nordlicht-mode.example/p/merino-cardigan-558201?cid=48213"><img src="https://img.nordlicht-mode.example/p/558201_1.jpg" alt="Merino cardigan 558201" title="Art. 558201"></a>
    <p>Merino cardigan</p>
    <p><span class="price-old">€129.00</span> <strong>€96.75</strong></p>
  </td>
  <td data-sku="558377" align="center">
    <a href="https://www.nordlicht-mode.example/p/linen-trousers-558377?cid=48213"><img src="https://img.nordlicht-mode.example/p/558377_1.jpg" alt="Linen trousers 558377"></a>
    <p>Linen trousers</p>
    <p><span class="price-old">€89.00</span> <strong>€66.75</strong></p>
  </td>
</tr></table></td></tr>
<tr><td align="center"><p>Free shipping on orders over €50 · 100-day returns · Questions? Call 030 555 01234</p></td></tr>
<tr><td style="font-size:11px;color:#9E9E9E">
  Nordlicht Mode GmbH · Schönhauser Allee 36 · 10435 Berlin<br>
  Amtsgericht Charlottenburg HRB 184213 B · USt-IdNr. DE298765432<br>
  <a href="https://www.nordlicht-mode.example/newsletter/unsubscribe?u=7c41e9&amp;list=3">Unsubscribe</a> · <a href="https://www.nordlicht-mode.example/privacy">Privacy</a>
</td></tr>
</table></body></html>`,
    codes: [],
    links: [
      {
        url:
          "https://www.nordlicht-mode.example/sale?utm_source=newsletter&utm_medium=email&utm_campaign=spring24&cid=48213",
        text: "Shop the sale",
      },
      { url: "https://www.nordlicht-mode.example/p/merino-cardigan-558201?cid=48213", text: null },
      { url: "https://www.nordlicht-mode.example/p/linen-trousers-558377?cid=48213", text: null },
      { url: "https://www.nordlicht-mode.example/newsletter/unsubscribe?u=7c41e9&list=3", text: "Unsubscribe" },
      { url: "https://www.nordlicht-mode.example/privacy", text: "Privacy" },
    ],
  },
  {
    name: "german Bestätigungscode with a space (multipart)",
    subject: "Ihr Bestätigungscode für Kleinanzeigen",
    text: `Hallo,

Ihr Bestätigungscode lautet:

482 193

Bitte geben Sie den Code innerhalb von 30 Minuten in der App ein. Aus Sicherheitsgründen geben wir den Code niemals telefonisch heraus.

Sie haben diese E-Mail nicht angefordert? Dann können Sie sie ignorieren oder uns unter https://hilfe.example-anzeigen.de/kontakt kontaktieren.

Viele Grüße
Ihr Kleinanzeigen-Team

Example Anzeigen GmbH, Albert-Einstein-Ring 2-6, 14532 Kleinmachnow
Registergericht: Amtsgericht Potsdam, HRB 33418 P
`,
    html: `<html><body style="font-family:Arial,Helvetica,sans-serif;color:#1D4B00">
<p>Hallo,</p>
<p>Ihr Bestätigungscode lautet:</p>
<p style="font-size:28px;font-weight:bold;letter-spacing:4px">482 193</p>
<p>Bitte geben Sie den Code innerhalb von 30 Minuten in der App ein. Aus Sicherheitsgründen geben wir den Code niemals telefonisch heraus.</p>
<p>Sie haben diese E-Mail nicht angefordert? Dann können Sie sie ignorieren oder <a href="https://hilfe.example-anzeigen.de/kontakt">uns kontaktieren</a>.</p>
<p>Viele Grüße<br>Ihr Kleinanzeigen-Team</p>
<p style="font-size:11px;color:#767676">Example Anzeigen GmbH, Albert-Einstein-Ring 2-6, 14532 Kleinmachnow<br>Registergericht: Amtsgericht Potsdam, HRB 33418 P</p>
</body></html>`,
    codes: ["482193"],
    links: [{ url: "https://hilfe.example-anzeigen.de/kontakt", text: "uns kontaktieren" }],
  },
  {
    name: "spanish código de verificación with address and phone (text only)",
    subject: "Tu código de verificación de Rutafácil",
    text: `¡Hola Lucía!

Tu código de verificación es: 905133

Introdúcelo en la aplicación para confirmar tu dirección de correo electrónico. El código caduca en 10 minutos.

Si no has solicitado este código, ignora este mensaje o escríbenos a ayuda@rutafacil.es.

Rutafácil Movilidad S.L.
Calle de Alcalá 48, 28014 Madrid
Tel. +34 912 345 678
https://www.rutafacil.es/privacidad
`,
    html: null,
    codes: ["905133"],
    links: [{ url: "https://www.rutafacil.es/privacidad", text: null }],
  },
  {
    name: "french code de vérification with a space (html only)",
    subject: "Votre code de vérification SantéPlus",
    text: null,
    html: `<html><body style="font-family:Arial">
<p>Bonjour Camille,</p>
<p>Voici votre code de vérification à usage unique :</p>
<p style="font-size:30px;letter-spacing:8px"><strong>318 275</strong></p>
<p>Ce code expire dans 10 minutes. Ne le communiquez jamais, même à notre service client.</p>
<p>Vous n'êtes pas à l'origine de cette demande ? <a href="https://www.santeplus.fr/compte/securite?source=email&amp;lang=fr">Sécurisez votre compte</a>.</p>
<p>L'équipe SantéPlus<br>SantéPlus SAS, 12 rue de la Paix, 75002 Paris<br>Service client : 01 84 88 00 00 (du lundi au vendredi, 9h–18h)</p>
</body></html>`,
    codes: ["318275"],
    links: [{ url: "https://www.santeplus.fr/compte/securite?source=email&lang=fr", text: "Sécurisez votre compte" }],
  },
  {
    name: "gitlab identity verification with the same code in text and html (multipart)",
    subject: "Verify your identity",
    text: `GitLab

Hi Ada Lovelace!

Someone signed in to GitLab with your account from a new location. To complete the sign in, use this verification code:

620481

Expires in 60 minutes.

IP: 192.0.2.146
Location: Amsterdam, NL

If you don't recognize this activity, change your password immediately: https://gitlab.com/-/user_settings/password/edit

You're receiving this email because of your account on gitlab.com. Manage all notifications: https://gitlab.com/-/profile/notifications
`,
    html: `<html><head><style>.verification-code{font-size:18px;font-weight:700;letter-spacing:2px}</style></head><body>
<table width="640"><tr><td><img alt="GitLab" height="50" width="55" src="https://gitlab.com/assets/mailers/gitlab_logo-2957169c8ef64c58616a1ac3f4fc626e8a35ce4eb3ed31bb0d873712f2a041a0.png"></td></tr>
<tr><td><p>Hi Ada Lovelace!</p>
<p>Someone signed in to GitLab with your account from a new location. To complete the sign in, use this verification code:</p>
<p class="verification-code" style="font-size:18px;font-weight:700;letter-spacing:2px">620481</p>
<p>Expires in 60 minutes.</p>
<p>IP: 192.0.2.146<br>Location: Amsterdam, NL</p>
<p>If you don't recognize this activity, <a href="https://gitlab.com/-/user_settings/password/edit">change your password</a> immediately.</p></td></tr>
<tr><td style="font-size:13px;color:#5C5C5C">You're receiving this email because of your account on <a href="https://gitlab.com">gitlab.com</a>. <a href="https://gitlab.com/-/profile/notifications">Manage all notifications</a> · <a href="https://gitlab.com/help">Help</a></td></tr>
</table></body></html>`,
    codes: ["620481"],
    links: [
      { url: "https://gitlab.com/-/user_settings/password/edit", text: "change your password" },
      { url: "https://gitlab.com", text: "gitlab.com" },
      { url: "https://gitlab.com/-/profile/notifications", text: "Manage all notifications" },
      { url: "https://gitlab.com/help", text: "Help" },
    ],
  },
  {
    name: "instagram code only in the subject (html only)",
    subject: "739201 is your Instagram code",
    text: null,
    html: `<html><body style="font-family:Helvetica Neue,Helvetica,Lucida Grande,tahoma,verdana,arial,sans-serif">
<table width="430"><tr><td><img src="https://static.xx.fbcdn.net/rsrc.php/v3/yI/r/b8hR6kDGPJL.png" width="104" alt="Instagram"></td></tr>
<tr><td><p>Hi alex.rivera,</p>
<p>Someone tried to sign up for an Instagram account with alex.rivera@example.com. If it was you, enter the confirmation code from the subject line of this email in the app.</p>
<p>If you didn't request this, you can <a href="https://www.instagram.com/accounts/remove/revoke_wrong_email/?uidb36=1x9k&amp;token=5ab-82c1f&amp;nonce=QwE4">remove your email address</a> from this account.</p></td></tr>
<tr><td style="color:#ABADAE;font-size:11px">© Instagram. Meta Platforms, Inc., 1601 Willow Road, Menlo Park, CA 94025<br>This message was sent to <a href="mailto:alex.rivera@example.com">alex.rivera@example.com</a>.</td></tr>
</table></body></html>`,
    codes: ["739201"],
    links: [
      {
        url: "https://www.instagram.com/accounts/remove/revoke_wrong_email/?uidb36=1x9k&token=5ab-82c1f&nonce=QwE4",
        text: "remove your email address",
      },
    ],
  },
  {
    name: "apple email verification with a leading zero (multipart)",
    subject: "Verify your Apple Account email address",
    text: `Verify your email address.

You've entered alex@example.com as the email address for your Apple Account. To verify this email address belongs to you, enter the code below on the email verification page:

093118

This code will expire three hours after this email was sent.

Why you received this email.
Apple requires verification whenever an email address is selected as an Apple Account. Your email address cannot be used until you verify it.

Apple Account | Support | Privacy Policy
Copyright © 2024 Apple Inc. One Apple Park Way, Cupertino, CA 95014, United States. All rights reserved.
`,
    html: `<html><body style="font-family:-apple-system,'SF Pro Text',sans-serif">
<table width="680"><tr><td><img src="https://appleid.cdn-apple.com/static/bin/cb2951548393/dist/assets/apple_logo_web.png" alt="Apple" width="22"></td></tr>
<tr><td><h1 style="font-size:24px">Verify your email address.</h1>
<p>You've entered <strong>alex@example.com</strong> as the email address for your Apple Account. To verify this email address belongs to you, enter the code below on the email verification page:</p>
<p style="font-size:27px"><strong>093118</strong></p>
<p>This code will expire three hours after this email was sent.</p>
<p><strong>Why you received this email.</strong><br>Apple requires verification whenever an email address is selected as an Apple Account. Your email address cannot be used until you verify it.</p></td></tr>
<tr><td style="font-size:12px;color:#888888"><a href="https://appleid.apple.com/">Apple Account</a> | <a href="https://support.apple.com/">Support</a> | <a href="https://www.apple.com/legal/privacy/">Privacy Policy</a><br>
Copyright © 2024 Apple Inc. One Apple Park Way, Cupertino, CA 95014, United States. All rights reserved.</td></tr>
</table></body></html>`,
    codes: ["093118"],
    links: [
      { url: "https://appleid.apple.com/", text: "Apple Account" },
      { url: "https://support.apple.com/", text: "Support" },
      { url: "https://www.apple.com/legal/privacy/", text: "Privacy Policy" },
    ],
  },
  {
    name: "discord email verification through a tracked link, text link with a fragment (multipart, no code)",
    subject: "Verify Email Address for Discord",
    text: `Hey wumpus,

Thanks for registering for an account on Discord! Before we get started, we just need to confirm that this is you. Click below to verify your email address:

https://discord.com/verify#token=Mjk0ODIxOTM3.Gx4k2P.aB3dE5fG7hI9

Need help? Contact our support team or hit us up on Twitter @discord.
Want to give us feedback? Let us know what you think on our feedback site.

Sent by Discord • check our blog • @discord
444 De Haro Street, Suite 200, San Francisco, CA 94107
`,
    html:
      `<html><head><style>.btn{background-color:#5865F2;color:#FFFFFF}</style></head><body style="background:#F9F9F9">
<div style="max-width:640px;margin:0 auto">
  <img src="https://cdn.discordapp.com/email_assets/592423b8aedd155170617c9ae736e6e7.png" alt="Discord" width="138">
  <h2 style="font-weight:500;font-size:20px;color:#4F545C">Hey wumpus,</h2>
  <p>Thanks for registering for an account on Discord! Before we get started, we just need to confirm that this is you. Click below to verify your email address:</p>
  <a class="btn" href="https://click.discord.com/ls/click?upn=qDOo8cnwIoKzt0aLL1cBeJo-2BVm8l-2FbK3KCMzs&amp;upn2=eX0" style="padding:15px 19px;border-radius:3px">
    Verify Email
  </a>
  <p style="color:#99AAB5;font-size:12px">Need help? <a href="https://click.discord.com/ls/click?upn=qDOo8cnwIoKzt0aLL1cBeJo-2BSupport">Contact our support team</a> or hit us up on Twitter <a href="https://twitter.com/discord">@discord</a>.</p>
  <p style="color:#99AAB5;font-size:12px">Sent by Discord • <a href="https://discord.com/blog">check our blog</a> • <a href="https://twitter.com/discord">@discord</a><br>444 De Haro Street, Suite 200, San Francisco, CA 94107</p>
</div></body></html>`,
    codes: [],
    links: [
      {
        url: "https://click.discord.com/ls/click?upn=qDOo8cnwIoKzt0aLL1cBeJo-2BVm8l-2FbK3KCMzs&upn2=eX0",
        text: "Verify Email",
      },
      {
        url: "https://click.discord.com/ls/click?upn=qDOo8cnwIoKzt0aLL1cBeJo-2BSupport",
        text: "Contact our support team",
      },
      { url: "https://twitter.com/discord", text: "@discord" },
      { url: "https://discord.com/blog", text: "check our blog" },
      { url: "https://discord.com/verify#token=Mjk0ODIxOTM3.Gx4k2P.aB3dE5fG7hI9", text: null },
    ],
  },
  {
    name: "aws account verification code with legal footer (text only)",
    subject: "AWS Email Verification",
    text: `Amazon Web Services

Verify your identity

Hello,

Thanks for starting the new AWS account creation process. We want to make sure it's really you. Please enter the following verification code when prompted. If you don't want to create an account, you can ignore this message.

Verification code
418302
(This code is valid for 10 minutes)

Amazon Web Services will never email you and ask you to disclose or verify your password, credit card, or banking account number.

This message was produced and distributed by Amazon Web Services, Inc., 410 Terry Avenue North, Seattle, WA 98109-5210. AWS will not be bound by, and specifically objects to, any term, condition or other provision which is different from or in addition to the provisions of the AWS Customer Agreement between AWS and you (https://aws.amazon.com/agreement/). © 2024, Amazon Web Services, Inc. or its affiliates. All rights reserved. Read our Privacy Notice at https://aws.amazon.com/privacy/.
`,
    html: null,
    codes: ["418302"],
    links: [
      { url: "https://aws.amazon.com/agreement/", text: null },
      { url: "https://aws.amazon.com/privacy/", text: null },
    ],
  },
  {
    name: "airline booking confirmation with booking reference and flight number (multipart, no code)",
    subject: "Your booking is confirmed: Berlin → Lisbon, 14 Jun 2024",
    text: `Olá Marta,

Your booking is confirmed. Have a great trip!

Booking reference: K3J9XQ

Flight TP2851 · Friday, 14 June 2024
Departs 06:40 Berlin (BER) Terminal 1
Arrives 09:15 Lisbon (LIS) Terminal 1
Seat 14C · Economy Classic · 1 x 23 kg checked bag

Total paid: €184.37

Manage your booking: https://www.flytap.example/manage?pnr=K3J9XQ&lastName=Silva
Online check-in opens 36 hours before departure.

TAP Air Portugal · Edifício 25, Aeroporto de Lisboa, 1704-801 Lisboa
`,
    html: `<html><body style="font-family:Arial">
<table width="600">
<tr><td style="background:#00A94F"><img src="https://www.flytap.example/img/email/logo.png" alt="TAP Air Portugal" width="120"></td></tr>
<tr><td><p>Olá Marta,</p><p>Your booking is confirmed. Have a great trip!</p></td></tr>
<tr><td>Booking reference</td></tr>
<tr><td style="font-size:28px;font-weight:bold;letter-spacing:3px">K3J9XQ</td></tr>
<tr><td><table>
  <tr><th>Flight</th><th>Date</th><th>Departs</th><th>Arrives</th></tr>
  <tr><td>TP2851</td><td>14 Jun 2024</td><td>06:40 BER T1</td><td>09:15 LIS T1</td></tr>
</table></td></tr>
<tr><td>Seat 14C · Economy Classic · 1 x 23 kg checked bag</td></tr>
<tr><td>Total paid: <strong>€184.37</strong></td></tr>
<tr><td><a href="https://www.flytap.example/manage?pnr=K3J9XQ&amp;lastName=Silva">Manage your booking</a> · <a href="https://www.flytap.example/check-in?pnr=K3J9XQ&amp;lastName=Silva">Check in online</a></td></tr>
<tr><td style="font-size:11px">TAP Air Portugal · Edifício 25, Aeroporto de Lisboa, 1704-801 Lisboa</td></tr>
</table></body></html>`,
    codes: [],
    links: [
      { url: "https://www.flytap.example/manage?pnr=K3J9XQ&lastName=Silva", text: "Manage your booking" },
      { url: "https://www.flytap.example/check-in?pnr=K3J9XQ&lastName=Silva", text: "Check in online" },
    ],
  },
  {
    name: "hosting invoice with IBAN, customer number and dates (text only, no code)",
    subject: "Invoice INV-2024-0042 from Hetzner Online GmbH",
    text: `Dear customer,

please find attached invoice R0019283746 for April 2024.

Customer number: K0481923
Invoice date: 03/05/2024
Due date: 17/05/2024
Amount due: €1,250.00 (incl. 19% VAT)

Please transfer the amount to:
IBAN DE89 3704 0044 0532 0130 00
BIC COBADEFFXXX
Reference: R0019283746

You can view all invoices at https://accounts.hetzner.example/invoice?id=R0019283746&lang=en

Kind regards
Your Hetzner Online Team

Hetzner Online GmbH, Industriestr. 25, 91710 Gunzenhausen
VAT ID DE812871812, Register court Ansbach HRB 6089
`,
    html: null,
    codes: [],
    links: [{ url: "https://accounts.hetzner.example/invoice?id=R0019283746&lang=en", text: null }],
  },
  {
    name: "doctor appointment reminder in German with address and phone (text only, no code)",
    subject: "Terminerinnerung: Dienstag, 14. Mai 2024, 14:30 Uhr",
    text: `Guten Tag Frau Schneider,

wir erinnern Sie an Ihren Termin am Dienstag, 14. Mai 2024 um 14:30 Uhr bei Dr. med. Andreas Müller.

Praxis für Allgemeinmedizin
Hauptstraße 12, 80331 München
Tel. 089 1234567 · Fax 089 1234568

Bitte bringen Sie Ihre Versichertenkarte mit. Falls Sie den Termin nicht wahrnehmen können, sagen Sie bitte bis spätestens 24 Stunden vorher ab: https://termine.praxis-mueller.example/absagen?t=8c41f2&p=4821

Mit freundlichen Grüßen
Ihr Praxisteam
`,
    html: null,
    codes: [],
    links: [{ url: "https://termine.praxis-mueller.example/absagen?t=8c41f2&p=4821", text: null }],
  },
  {
    name: "google new sign-in security alert (multipart, no code)",
    subject: "Security alert",
    text: `A new sign-in on Windows

alex.taylor@gmail.com

We noticed a new sign-in to your Google Account on a Windows device. If this was you, you don't need to do anything. If not, we'll help you secure your account.

Check activity
https://accounts.google.com/AccountChooser?Email=alex.taylor@gmail.com&continue=https://myaccount.google.com/alert/nt/1714731240000?rfn%3D325%26rfnc%3D1%26eid%3D-8830551

You can also see security activity at
https://myaccount.google.com/notifications

You received this email to let you know about important changes to your Google Account and services.
© 2024 Google LLC, 1600 Amphitheatre Parkway, Mountain View, CA 94043, USA
`,
    html: `<html><body>
<table width="516" style="border:thin solid #DADCE0;border-radius:8px">
<tr><td align="center"><img src="https://www.gstatic.com/images/branding/googlelogo/2x/googlelogo_color_74x24dp.png" width="74" height="24" alt="Google"></td></tr>
<tr><td align="center" style="font-size:24px">A new sign-in on Windows</td></tr>
<tr><td align="center"><a style="color:rgba(0,0,0,0.87)">alex.taylor@gmail.com</a></td></tr>
<tr><td style="font-size:14px">We noticed a new sign-in to your Google Account on a Windows device. If this was you, you don’t need to do anything. If not, we’ll help you secure your account.</td></tr>
<tr><td align="center"><a href="https://accounts.google.com/AccountChooser?Email=alex.taylor@gmail.com&amp;continue=https://myaccount.google.com/alert/nt/1714731240000?rfn%3D325%26rfnc%3D1%26eid%3D-8830551" style="background-color:#4184F3;color:#FFFFFF">Check activity</a></td></tr>
<tr><td style="font-size:12px">You can also see security activity at<br><a href="https://myaccount.google.com/notifications">https://myaccount.google.com/notifications</a></td></tr>
<tr><td style="font-size:11px;color:rgba(0,0,0,0.54)">You received this email to let you know about important changes to your Google Account and services.<br>© 2024 Google LLC, 1600 Amphitheatre Parkway, Mountain View, CA 94043, USA</td></tr>
</table></body></html>`,
    codes: [],
    links: [
      {
        url:
          "https://accounts.google.com/AccountChooser?Email=alex.taylor@gmail.com&continue=https://myaccount.google.com/alert/nt/1714731240000?rfn%3D325%26rfnc%3D1%26eid%3D-8830551",
        text: "Check activity",
      },
      { url: "https://myaccount.google.com/notifications", text: "https://myaccount.google.com/notifications" },
    ],
  },
  {
    name: "bank payment approval with an 8-digit passcode (text only)",
    subject: "Approve your payment",
    text: `Hello Chris,

You asked to approve a payment of $1,250.00 to ACME LLC on 05/03/2024 at 16:20 ET.

Your one-time passcode is 61538207

Enter it on the payment screen within 5 minutes. We will never call you to ask for this passcode.

Didn't make this payment? Call us right away at 1-800-555-0199 (24/7), or +1 (302) 555-0143 from outside the US.

Harbor Federal Credit Union · PO Box 4821 · Wilmington, DE 19801
Member FDIC. Equal Housing Lender.
`,
    html: null,
    codes: ["61538207"],
    links: [],
  },
  {
    name: "vercel sign-in code in two groups of four (multipart)",
    subject: "Vercel Sign-in Verification",
    text: `Vercel

Sign in to Vercel

We received a sign-in request for the account dana@example.com. Your verification code is:

1957 3820

Requested from: San Francisco, US · 104.28.193.42 · Chrome 124 on macOS

If you didn't request this, you can safely ignore this email. Someone else might have typed your email address by mistake.

Vercel Inc. 440 N Barranca Ave #4133 Covina, CA 91723
`,
    html: `<html><body style="background-color:#FFFFFF;font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto">
<div style="border:1px solid #EAEAEA;border-radius:5px;margin:40px auto;padding:20px;width:465px">
<img src="https://assets.vercel.com/image/upload/front/email/vercel-logotype-dark.png" width="40" height="37" alt="Vercel">
<h1 style="font-size:24px;font-weight:normal">Sign in to <strong>Vercel</strong></h1>
<p>We received a sign-in request for the account <a href="mailto:dana@example.com">dana@example.com</a>. Your verification code is:</p>
<p style="font-family:Menlo,monospace;font-size:32px;letter-spacing:4px">1957 3820</p>
<p style="color:#666666;font-size:12px">Requested from: San Francisco, US · 104.28.193.42 · Chrome 124 on macOS</p>
<p style="color:#666666;font-size:12px">If you didn't request this, you can safely ignore this email. <a href="https://vercel.com/help">Get help</a></p>
<p style="color:#666666;font-size:12px">Vercel Inc. 440 N Barranca Ave #4133 Covina, CA 91723</p>
</div></body></html>`,
    codes: ["19573820"],
    links: [{ url: "https://vercel.com/help", text: "Get help" }],
  },
  {
    name: "game account two-factor alphanumeric code in a label cell, with player id (html only)",
    subject: "Your Starfall two-factor sign-in code",
    text: null,
    html: `<html><head><style>
  .code-cell { font-size: 26px; font-family: Consolas, monospace; color: #F5C518; }
  .muted { color: #7A7F87; }
</style></head><body style="background:#121212;color:#E6E6E6">
<table width="600" align="center">
<tr><td colspan="2"><img src="https://cdn.starfall.example/email/header_v3.png" alt="Starfall Online – Season 12" width="600"></td></tr>
<tr><td colspan="2"><p>Hello Kestrel_77,</p><p>Someone is trying to sign in to your Starfall account (Player ID: 48213307) from a new device.</p></td></tr>
<tr><td>Your sign-in code</td><td class="code-cell">9XQ4TR</td></tr>
<tr><td colspan="2" class="muted"><p>The code is valid for 30 minutes. If this wasn't you, <a href="https://account.starfall.example/security/password?ref=2fa-mail&amp;lang=en">change your password</a> and <a href="https://support.starfall.example/hc/articles/360048213">contact support</a>.</p></td></tr>
<tr><td colspan="2" class="muted" style="font-size:11px">Starfall Games Ltd., 1 Lime Street, London EC3M 7HA · © 2024 · Season 12 ends 30/06/2024</td></tr>
</table></body></html>`,
    codes: ["9XQ4TR"],
    links: [
      { url: "https://account.starfall.example/security/password?ref=2fa-mail&lang=en", text: "change your password" },
      { url: "https://support.starfall.example/hc/articles/360048213", text: "contact support" },
    ],
  },
  {
    name: "shop app login code in a big cell with a hidden preheader (html only)",
    subject: "Your Shop login code",
    text: null,
    html: `<!DOCTYPE html><html><head><meta name="viewport" content="width=device-width"><style>
  .code { font-size: 36px; font-weight: 600; letter-spacing: 8px; color: #5433EB; }
</style></head><body>
<span style="display:none!important;mso-hide:all;font-size:1px;color:#FFFFFF">Your code is 730512. It expires in 10 minutes.</span>
<table width="100%"><tr><td align="center">
<table width="400">
<tr><td align="center"><img src="https://cdn.shopify.com/shopifycloud/shop/assets/email/shop-logo-purple.png" alt="shop" width="84"></td></tr>
<tr><td align="center"><h1 style="font-size:20px">Enter this code to log in</h1></td></tr>
<tr><td align="center" class="code" style="font-size:36px;letter-spacing:8px">730512</td></tr>
<tr><td align="center" style="color:#707070">This code expires in 10 minutes. If you didn’t try to log in, you can ignore this email.</td></tr>
<tr><td align="center" style="font-size:12px;color:#A0A0A0"><a href="https://shop.app/privacy">Privacy</a> · <a href="https://shop.app/terms">Terms</a><br>Shopify Inc., 151 O'Connor Street, Ground floor, Ottawa, ON K2P 2L8, Canada</td></tr>
</table></td></tr></table></body></html>`,
    codes: ["730512"],
    links: [
      { url: "https://shop.app/privacy", text: "Privacy" },
      { url: "https://shop.app/terms", text: "Terms" },
    ],
  },
  {
    name: "basecamp sign-in code alone on its line (text only)",
    subject: "Sign in to Basecamp",
    text: `Hi Dana,

Here's the code you asked for. Type it in the Basecamp window to sign in:

    820417

It works for the next 20 minutes. Didn't ask for it? Ignore this email — nobody can sign in without it.

— The Basecamp team
37signals LLC, 2045 W Grand Ave Ste B, PMB 26200, Chicago, IL 60612
`,
    html: null,
    codes: ["820417"],
    links: [],
  },
  {
    name: "dropbox security code with a hyphen (multipart)",
    subject: "Your Dropbox security code",
    text: `Hi Morgan,

Your Dropbox security code is 662-019

Enter this code on the sign-in screen to finish signing in. The code expires in 15 minutes.

Not you? Secure your account: https://www.dropbox.com/account/security

Happy Dropboxing!
- The Dropbox Team

Dropbox, Inc. · 1800 Owens St, San Francisco, CA 94158
`,
    html: `<html><body style="font-family:'Open Sans',sans-serif;color:#637282">
<img src="https://cfl.dropboxstatic.com/static/images/emails/glyph/glyph_34@2x.png" alt="Dropbox" width="34">
<p>Hi Morgan,</p>
<p>Your Dropbox security code is <b style="color:#1E1919">662-019</b></p>
<p>Enter this code on the sign-in screen to finish signing in. The code expires in 15 minutes.</p>
<p>Not you? <a href="https://www.dropbox.com/account/security">Secure your account</a></p>
<p>Happy Dropboxing!<br>- The Dropbox Team</p>
<p style="font-size:11px">Dropbox, Inc. · 1800 Owens St, San Francisco, CA 94158</p>
</body></html>`,
    codes: ["662019"],
    links: [{ url: "https://www.dropbox.com/account/security", text: "Secure your account" }],
  },
  {
    name: "welcome mail with trial dates, site id and an embed snippet (multipart, no code)",
    subject: "Welcome to Plausible! Your 30-day free trial has started",
    text: `Hey Robin,

Welcome to Plausible Analytics! Your 30-day free trial runs until June 14, 2024.

Site ID: 80412337
Plan: Growth (up to 10,000 monthly pageviews)

To start counting visitors, add this snippet to the <head> of your site:

<script defer data-domain="example.com" src="https://plausible.io/js/script.js"></script>

Need help? Read the docs at https://plausible.io/docs/plausible-script or just reply to this email.

Marko & Uku
Plausible Insights OÜ, Västriku tn 2, 50403 Tartu, Estonia
`,
    html: `<html><body style="font-family:system-ui,sans-serif">
<p>Hey Robin,</p>
<p>Welcome to Plausible Analytics! Your 30-day free trial runs until <strong>June 14, 2024</strong>.</p>
<p>Site ID: 80412337<br>Plan: Growth (up to 10,000 monthly pageviews)</p>
<p>To start counting visitors, add this snippet to the &lt;head&gt; of your site:</p>
<pre style="background:#F3F4F6;padding:12px"><code>&lt;script defer data-domain="example.com" src="https://plausible.io/js/script.js"&gt;&lt;/script&gt;</code></pre>
<p>Need help? <a href="https://plausible.io/docs/plausible-script">Read the docs</a> or just reply to this email.</p>
<p>Marko &amp; Uku<br><span style="color:#6B7280;font-size:12px">Plausible Insights OÜ, Västriku tn 2, 50403 Tartu, Estonia</span></p>
</body></html>`,
    codes: [],
    links: [
      { url: "https://plausible.io/js/script.js", text: null },
      { url: "https://plausible.io/docs/plausible-script", text: "Read the docs" },
    ],
  },
  {
    name: "design digest with hex colours in the text (text only, no code)",
    subject: "Design Weekly #188: the new Material palette",
    text: `Design Weekly #188 · 3 May 2024

The new palette
Primary #1A73E8, secondary #34A853, error #EA4335 and surface #FFFBFE. Contrast ratio of the primary on white: 4.52:1.

Type scale
Display 57/64, headline 32/40, body 16/24. Grid: 12 columns, 1440 px max width, 24 px gutters.

Tool of the week
Pixel-perfect exports at 2x and 3x, now with AVIF. Free for teams up to 5 editors; $12 per editor after that.

Read online: https://designweekly.example/issues/188?utm_source=email
Unsubscribe: https://designweekly.example/u/5c1e9a?list=188
`,
    html: null,
    codes: [],
    links: [
      { url: "https://designweekly.example/issues/188?utm_source=email", text: null },
      { url: "https://designweekly.example/u/5c1e9a?list=188", text: null },
    ],
  },
  {
    name: "concert tickets with order number, barcode and QR code (html only, no code)",
    subject: "Your tickets: Khruangbin — Columbiahalle, Sat 15 Jun 2024",
    text: null,
    html: `<html><body style="font-family:Helvetica,Arial">
<table width="600">
<tr><td><h1>You're going to Khruangbin!</h1><p>Order 10025841 · 2 tickets</p></td></tr>
<tr><td><table>
  <tr><td>Date</td><td>Sat, 15 Jun 2024</td></tr>
  <tr><td>Doors</td><td>19:00</td></tr>
  <tr><td>Show</td><td>20:00</td></tr>
  <tr><td>Venue</td><td>Columbiahalle, Columbiadamm 13-21, 10965 Berlin</td></tr>
</table></td></tr>
<tr><td><p>Show this QR code at the entrance:</p>
<img src="https://tickets.example/qr/10025841-1.png" alt="QR code 7301948372" width="200" height="200">
<p style="font-size:12px">Barcode: 48210039571</p></td></tr>
<tr><td><p>Ticket 1 of 2: Standing · €48.50<br>Ticket 2 of 2: Standing · €48.50<br>Service fee: €7.80<br><strong>Total: €104.80</strong></p></td></tr>
<tr><td><a href="https://tickets.example/orders/10025841?t=Zm9vYmFy&amp;download=wallet">Add to Apple Wallet</a> · <a href="https://tickets.example/orders/10025841">Manage order</a></td></tr>
<tr><td style="font-size:11px;color:#888">Tickets are non-refundable. Questions? <a href="https://help.tickets.example/contact?topic=order">Contact us</a>.</td></tr>
</table></body></html>`,
    codes: [],
    links: [
      { url: "https://tickets.example/orders/10025841?t=Zm9vYmFy&download=wallet", text: "Add to Apple Wallet" },
      { url: "https://tickets.example/orders/10025841", text: "Manage order" },
      { url: "https://help.tickets.example/contact?topic=order", text: "Contact us" },
    ],
  },
  {
    name: "slack unread messages digest with times and channel links (text only, no code)",
    subject: "[Slack] Notifications from the Acme HQ workspace",
    text: `You have 12 unread messages in Acme HQ

#deploys
Deploy 4821 to production finished at 2:34 PM (took 7m 12s).
https://acme-hq.slack.com/archives/C04TQ2K9M/p1714745640123459

Priya Raman (2:41 PM)
Can someone look at the 502s on /api/v2/orders? Started around 14:05 UTC.
https://acme-hq.slack.com/archives/C02AB1CDE/p1714746060567890?thread_ts=1714746060.567890&cid=C02AB1CDE

Open Slack: https://acme-hq.slack.com/
Change notification settings: https://acme-hq.slack.com/account/notifications#email_settings
`,
    html: null,
    codes: [],
    links: [
      { url: "https://acme-hq.slack.com/archives/C04TQ2K9M/p1714745640123459", text: null },
      {
        url: "https://acme-hq.slack.com/archives/C02AB1CDE/p1714746060567890?thread_ts=1714746060.567890&cid=C02AB1CDE",
        text: null,
      },
      { url: "https://acme-hq.slack.com/", text: null },
      { url: "https://acme-hq.slack.com/account/notifications#email_settings", text: null },
    ],
  },
  {
    name: "github pull request review request (multipart, no code)",
    subject: "[acme/api] Fix rate limit headers for 429 responses (PR #4821)",
    text: `@alice requested your review on: acme/api#4821 Fix rate limit headers for 429 responses.

Commits:
  3f9c2a1 Return Retry-After in seconds
  8be01d4 Add test for 4821 regression

File changes: 3 files, +48 -12

Reply to this email directly, view it on GitHub:
https://github.com/acme/api/pull/4821#pullrequestreview-2031847752
You are receiving this because your review was requested.
Message ID: <acme/api/pull/4821/issue_event/12759321840@github.com>
`,
    html:
      `<p><a href="https://github.com/alice" class="user-mention">@alice</a> requested your review on: <a href="https://github.com/acme/api/pull/4821">acme/api#4821</a> Fix rate limit headers for 429 responses.</p>
<h4>Commits:</h4>
<ul>
  <li><a href="https://github.com/acme/api/pull/4821/commits/3f9c2a1"><code>3f9c2a1</code></a> Return Retry-After in seconds</li>
  <li><a href="https://github.com/acme/api/pull/4821/commits/8be01d4"><code>8be01d4</code></a> Add test for 4821 regression</li>
</ul>
<p>File changes: 3 files, +48 -12</p>
<p style="font-size:small;color:#666">—<br>Reply to this email directly, <a href="https://github.com/acme/api/pull/4821#pullrequestreview-2031847752">view it on GitHub</a>, or <a href="https://github.com/notifications/unsubscribe-auth/AABCD4821XYZ">unsubscribe</a>.<br>You are receiving this because your review was requested.<img src="https://github.com/notifications/beacon/AABCD4821XYZ.gif" height="1" width="1" alt=""><span style="color:transparent;font-size:0;display:none">Message ID: &lt;acme/api/pull/4821/issue_event/12759321840@github.com&gt;</span></p>`,
    codes: [],
    links: [
      { url: "https://github.com/alice", text: "@alice" },
      { url: "https://github.com/acme/api/pull/4821", text: "acme/api#4821" },
      { url: "https://github.com/acme/api/pull/4821/commits/3f9c2a1", text: "3f9c2a1" },
      { url: "https://github.com/acme/api/pull/4821/commits/8be01d4", text: "8be01d4" },
      { url: "https://github.com/acme/api/pull/4821#pullrequestreview-2031847752", text: "view it on GitHub" },
      { url: "https://github.com/notifications/unsubscribe-auth/AABCD4821XYZ", text: "unsubscribe" },
    ],
  },
  {
    name: "loom email confirmation with the code also inside a link (multipart)",
    subject: "Confirm your email for Loom",
    text: `Confirm your email address

Enter this code in the Loom window: 550812

Or open this link on the same device:
https://www.loom.com/verify-email?code=550812&email=kai%40example.com&source=desktop

The code and link expire in 1 hour.

Loom, Inc. · 140 2nd Street, 3rd Floor, San Francisco, CA 94105
`,
    html: `<html><body style="font-family:'Circular',Helvetica">
<h1 style="font-size:22px">Confirm your email address</h1>
<p>Enter this code in the Loom window: <span style="font-size:22px;font-weight:700">550812</span></p>
<p>Or <a href="https://www.loom.com/verify-email?code=550812&amp;email=kai%40example.com&amp;source=desktop" title="Verify 550812">open this link</a> on the same device.</p>
<p style="color:#999">The code and link expire in 1 hour.</p>
<p style="color:#999;font-size:11px">Loom, Inc. · 140 2nd Street, 3rd Floor, San Francisco, CA 94105</p>
</body></html>`,
    codes: ["550812"],
    links: [
      {
        url: "https://www.loom.com/verify-email?code=550812&email=kai%40example.com&source=desktop",
        text: "open this link",
      },
    ],
  },
  {
    name: "password reset code with decoys in attributes (html only)",
    subject: "Your password reset code",
    text: null,
    html: `<html><body style="font-family:Nunito,Arial">
<table width="480" align="center">
<tr><td align="center"><img src="https://cdn.owlingo.example/email/owl.png" alt="Owlingo mascot, code 111111" title="Code 222222" width="80"></td></tr>
<tr><td align="center"><h2>Forgot your password?</h2><p>Use this code to reset your password:</p></td></tr>
<tr><td align="center" data-code="333333" aria-label="Code 904 116" style="font-size:34px;font-weight:800;letter-spacing:6px">904 116</td></tr>
<tr><td align="center" style="color:#AFAFAF">This code expires in 15 minutes. Your 214-day streak is safe!</td></tr>
<tr><td align="center" style="font-size:12px"><a href="https://www.owlingo.example/settings/account" title="Account 444444">Account settings</a> · <a href="https://www.owlingo.example/help" data-track-id="555555">Help</a></td></tr>
<tr><td align="center" style="font-size:11px;color:#AFAFAF">Owlingo, Inc. · 5900 Penn Ave, Pittsburgh, PA 15206</td></tr>
</table></body></html>`,
    codes: ["904116"],
    links: [
      { url: "https://www.owlingo.example/settings/account", text: "Account settings" },
      { url: "https://www.owlingo.example/help", text: "Help" },
    ],
  },
  {
    name: "german shop order confirmation with Gutscheincode and Kundennummer (html only, no code)",
    subject: "Ihre Bestellung 302-4819274-1123 ist eingegangen",
    text: null,
    html:
      `<html><head><style>.summe{font-size:20px;font-weight:bold;color:#222222}</style></head><body style="font-family:Arial">
<p>Hallo Jonas,</p>
<p>vielen Dank für Ihre Bestellung bei Buchhaus Lindner! Wir haben sie am 03.05.2024 um 09:41 Uhr erhalten.</p>
<table>
  <tr><td>Bestellnummer:</td><td><strong>302-4819274-1123</strong></td></tr>
  <tr><td>Kundennummer:</td><td><strong>4812930</strong></td></tr>
  <tr><td>Voraussichtliche Lieferung:</td><td>Mi., 08.05.2024</td></tr>
</table>
<table>
  <tr><td>1 × „Der Zauberberg“ (Taschenbuch, ISBN 978-3-596-29433-6)</td><td>14,00 €</td></tr>
  <tr><td>1 × Lesezeichen Leder</td><td>9,90 €</td></tr>
  <tr><td>Versand</td><td>0,00 €</td></tr>
  <tr><td class="summe">Summe</td><td class="summe">23,90 €</td></tr>
</table>
<p>Lieferadresse:<br>Jonas Weber<br>Lindenstraße 7<br>50674 Köln</p>
<p>Als Dankeschön: Mit dem Gutscheincode <strong>LESEN2024</strong> sparen Sie 10 % auf Ihre nächste Bestellung.</p>
<p><a href="https://www.buchhaus-lindner.example/konto/bestellungen/302-4819274-1123">Bestellung ansehen</a> · <a href="https://www.buchhaus-lindner.example/widerruf">Widerrufsbelehrung</a></p>
<p style="font-size:11px;color:#777">Buchhaus Lindner GmbH · Breite Straße 21 · 50667 Köln · Tel. 0221 9876543 · HRB 88213</p>
</body></html>`,
    codes: [],
    links: [
      { url: "https://www.buchhaus-lindner.example/konto/bestellungen/302-4819274-1123", text: "Bestellung ansehen" },
      { url: "https://www.buchhaus-lindner.example/widerruf", text: "Widerrufsbelehrung" },
    ],
  },
  {
    name: "spanish shipping notice with order and tracking numbers (multipart, no code)",
    subject: "Tu pedido n.º 48213 está en camino",
    text: `¡Hola Carmen!

Tu pedido n.º 48213 ha salido de nuestro almacén y llegará el jueves 16 de mayo de 2024.

Número de seguimiento: ES2024051234567
Transportista: SEUR · Entrega entre las 9:00 y las 14:00

Sigue tu envío: https://www.seur.example/seguimiento?ref=ES2024051234567&cp=28013

Dirección de entrega: Calle Mayor 12, 3.º B, 28013 Madrid

Gracias por comprar en Casa Olivo.
`,
    html: `<html><body style="font-family:Arial">
<p>¡Hola Carmen!</p>
<p>Tu pedido n.º 48213 ha salido de nuestro almacén y llegará el <strong>jueves 16 de mayo de 2024</strong>.</p>
<p>Número de seguimiento: <strong>ES2024051234567</strong><br>Transportista: SEUR · Entrega entre las 9:00 y las 14:00</p>
<p><a href="https://www.seur.example/seguimiento?ref=ES2024051234567&amp;cp=28013">Sigue tu envío</a></p>
<p>Dirección de entrega: Calle Mayor 12, 3.º B, 28013 Madrid</p>
<p>Gracias por comprar en <a href="https://www.casaolivo.example">Casa Olivo</a>.</p>
</body></html>`,
    codes: [],
    links: [
      { url: "https://www.seur.example/seguimiento?ref=ES2024051234567&cp=28013", text: "Sigue tu envío" },
      { url: "https://www.casaolivo.example", text: "Casa Olivo" },
    ],
  },
  {
    name: "french 4-digit code de connexion (text only)",
    subject: "Votre code de connexion",
    text: `Bonjour Léa,

Votre code de connexion : 5821

Saisissez-le dans l'application Mon Espace Énergie pour accéder à votre compte. Il est valable 10 minutes.

Référence client : 7004 8213 5521
Votre conseiller : 09 70 83 33 33 (appel non surtaxé), du lundi au samedi de 8h à 20h.

À bientôt,
Le service client
https://www.espace-energie.example/aide
`,
    html: null,
    codes: ["5821"],
    links: [{ url: "https://www.espace-energie.example/aide", text: null }],
  },
  {
    name: "resend-style markdown text part with the code in backticks (text only)",
    subject: "Sign in to Resend",
    text: `**Your login code:** \`573920\`

This code expires in 10 minutes. If you didn't request it, ignore this email.

[Resend](https://resend.com) · 2261 Market Street #5039, San Francisco, CA 94114
`,
    html: null,
    codes: ["573920"],
    links: [{ url: "https://resend.com", text: null }],
  },
  {
    name: "account deletion confirmation link with a balanced parenthesis and angle brackets (text only, no code)",
    subject: "Confirm account deletion",
    text: `Hi Noor,

We got a request to delete your Trellix account (workspace ID 30912, 4 boards, 1,208 cards).

To confirm, open <https://trellix.example/account/delete?confirm=Yq3Mr8Zt1&ws=30912> within 48 hours.

Before you go, you can export your data (see https://help.trellix.example/wiki/Export_(JSON)).

If you didn't ask for this, change your password: https://trellix.example/settings/password, and tell us at security@trellix.example.
`,
    html: null,
    codes: [],
    links: [
      { url: "https://trellix.example/account/delete?confirm=Yq3Mr8Zt1&ws=30912", text: null },
      { url: "https://help.trellix.example/wiki/Export_(JSON)", text: null },
      { url: "https://trellix.example/settings/password", text: null },
    ],
  },
  {
    name: "sms-style short mail with the code first (text only)",
    subject: "Your Ridely code",
    text: `038471 is your Ridely verification code. Don't share it with anyone.

@ridely.example #038471
`,
    html: null,
    codes: ["038471"],
    links: [],
  },
  {
    name: "utility bill with meter readings and amounts (html only, no code)",
    subject: "Your April 2024 bill is ready",
    text: null,
    html: `<html><body style="font-family:Verdana">
<h2>Your bill is ready</h2>
<p>Account 4402 8817 36 · Bill date 02/05/2024</p>
<table>
  <tr><th>Meter</th><th>Previous</th><th>Current</th><th>Used</th></tr>
  <tr><td>Electricity (E17Z 03481)</td><td>48213</td><td>48597</td><td>384 kWh</td></tr>
  <tr><td>Gas (G4 992105)</td><td>12044</td><td>12101</td><td>57 m³</td></tr>
</table>
<p>Amount due: <strong style="font-size:22px">£142.18</strong> by 23 May 2024 via Direct Debit.</p>
<p>Saved 1200 kWh compared with April 2023 — nice work!</p>
<p><a href="https://my.brightwatt.example/bills/2024-04?acc=4402881736">View your bill</a> · <a href="https://my.brightwatt.example/readings/new">Submit a reading</a></p>
<p style="font-size:11px">BrightWatt Energy Ltd, 8 Canal Wharf, Leeds LS11 5PS · 0330 123 4567</p>
</body></html>`,
    codes: [],
    links: [
      { url: "https://my.brightwatt.example/bills/2024-04?acc=4402881736", text: "View your bill" },
      { url: "https://my.brightwatt.example/readings/new", text: "Submit a reading" },
    ],
  },
  {
    name: "google verification code with the G- prefix (multipart)",
    subject: "G-482913 is your Google verification code",
    text: `Google

Verify your email address

To finish adding recovery email alex.recovery@example.com to your Google Account, enter this code:

G-482913

This code will expire in 24 hours. If you don't recognize this request, you can safely ignore this email.

You received this email to let you know about important changes to your Google Account and services.
© 2024 Google LLC, 1600 Amphitheatre Parkway, Mountain View, CA 94043, USA
`,
    html: `<html><body>
<table width="516"><tr><td align="center"><img src="https://www.gstatic.com/images/branding/googlelogo/2x/googlelogo_color_74x24dp.png" width="74" alt="Google"></td></tr>
<tr><td align="center" style="font-size:24px">Verify your email address</td></tr>
<tr><td>To finish adding recovery email <a>alex.recovery@example.com</a> to your Google Account, enter this code:</td></tr>
<tr><td align="center" style="font-size:36px;line-height:44px">G-482913</td></tr>
<tr><td style="font-size:14px">This code will expire in 24 hours. If you don't recognize this request, you can safely ignore this email.</td></tr>
<tr><td style="font-size:11px">You received this email to let you know about important changes to your Google Account and services.<br>© 2024 Google LLC, 1600 Amphitheatre Parkway, Mountain View, CA 94043, USA</td></tr>
</table></body></html>`,
    codes: ["482913"],
    links: [],
  },
  {
    name: "code drawn as one box per digit (html only)",
    subject: "Your Adobe verification code",
    text: null,
    html:
      `<html><head><style>.digit{border:1px solid #D3D3D3;border-radius:4px;font-size:28px;width:40px;text-align:center}</style></head>
<body style="font-family:adobe-clean,Helvetica">
<p>Hi Jamie,</p>
<p>Use this verification code to sign in to your Adobe account:</p>
<table role="presentation"><tr>
  <td class="digit">6</td><td class="digit">0</td><td class="digit">4</td><td class="digit">2</td><td class="digit">9</td><td class="digit">7</td>
</tr></table>
<p>The code expires in 10 minutes. Adobe will never ask you for this code by phone.</p>
<p style="font-size:11px;color:#6E6E6E">Adobe Inc., 345 Park Avenue, San Jose, CA 95110-2704 · <a href="https://www.adobe.com/privacy.html">Privacy policy</a></p>
</body></html>`,
    codes: ["604297"],
    links: [{ url: "https://www.adobe.com/privacy.html", text: "Privacy policy" }],
  },
  {
    name: "community digest with big stand-alone stats next to log-in prompts (html only, no code)",
    subject: "Your weekly summary from Rust Users Forum",
    text: null,
    html: `<html><body style="font-family:Arial">
<h2>Weekly summary</h2>
<p>Here's what happened on Rust Users Forum since your last visit on April 26. Log in to see everything.</p>
<table><tr>
  <td align="center"><div style="font-size:32px;font-weight:bold">1284</div><div>new posts</div></td>
  <td align="center"><div style="font-size:32px;font-weight:bold">3107</div><div>new members</div></td>
  <td align="center"><div style="font-size:32px;font-weight:bold">96</div><div>solutions</div></td>
</tr></table>
<h3>Popular topics</h3>
<ul>
  <li><a href="https://users.rust-lang.example/t/why-is-my-build-slow/110482">Why is my build slow?</a> — 48 replies</li>
  <li><a href="https://users.rust-lang.example/t/announcing-tokio-1-37/110517">Announcing Tokio 1.37</a> — 2210 views</li>
</ul>
<p><a href="https://users.rust-lang.example/login">Log in</a> to reply, or <a href="https://users.rust-lang.example/my/preferences/emails">change how often you get these</a>.</p>
</body></html>`,
    codes: [],
    links: [
      { url: "https://users.rust-lang.example/t/why-is-my-build-slow/110482", text: "Why is my build slow?" },
      { url: "https://users.rust-lang.example/t/announcing-tokio-1-37/110517", text: "Announcing Tokio 1.37" },
      { url: "https://users.rust-lang.example/login", text: "Log in" },
      { url: "https://users.rust-lang.example/my/preferences/emails", text: "change how often you get these" },
    ],
  },
  {
    name: "saas changelog that mentions verification next to round numbers (html only, no code)",
    subject: "What's new in Mailcheck: bulk verification, SOC 2 and a new dashboard",
    text: null,
    html: `<html><body style="font-family:Inter,Arial">
<h1>What's new in April</h1>
<h3>Bulk verification</h3>
<p>You can now verify up to 10000 addresses per upload. Verification of a full list takes about 90 seconds.</p>
<h3>SOC 2 Type II</h3>
<p>We completed our SOC 2 Type II audit in March 2024. Request the report from your account page.</p>
<h3>Pricing</h3>
<p>The Starter plan now includes 2500 checks per month for $9. Confirm your plan before 31 May to keep the old price.</p>
<p><a href="https://mailcheck.example/changelog/2024-04">Read the full changelog</a> · <a href="https://mailcheck.example/pricing">Pricing</a></p>
<p style="font-size:11px;color:#999">Mailcheck Ltd, 20 Station Road, Cambridge CB1 2JD · <a href="https://mailcheck.example/unsubscribe?u=88213">Unsubscribe</a></p>
</body></html>`,
    codes: [],
    links: [
      { url: "https://mailcheck.example/changelog/2024-04", text: "Read the full changelog" },
      { url: "https://mailcheck.example/pricing", text: "Pricing" },
      { url: "https://mailcheck.example/unsubscribe?u=88213", text: "Unsubscribe" },
    ],
  },
  {
    name: "activation code in a class-styled block two lines below its keyword (html only)",
    subject: "Welcome to Tandem",
    text: null,
    html: `<html><head><style>.activation{font-size:26px;font-family:monospace;color:#0B5FFF}</style></head><body>
<h1>Welcome to Tandem, Sofia!</h1>
<p>Thanks for signing up. Here is your activation code.</p>
<p>It is valid for 24 hours.</p>
<div class="activation">482561</div>
<p>Questions? Write to <a href="mailto:help@tandem.example">help@tandem.example</a> or visit <a href="https://tandem.example/help">our help center</a>.</p>
</body></html>`,
    codes: ["482561"],
    links: [{ url: "https://tandem.example/help", text: "our help center" }],
  },
  {
    name: "paypal-style security code first in the sentence (text only)",
    subject: "Your PayPal security code",
    text: `PayPal: 317604 is your security code. Your code expires in 10 minutes. Don't share your code.

Didn't request a code? Review your recent activity at https://www.paypal.com/myaccount/security and change your password.

PayPal Pte. Ltd. · Case ID PP-D-48213307 · Help: https://www.paypal.com/help
`,
    html: null,
    codes: ["317604"],
    links: [
      { url: "https://www.paypal.com/myaccount/security", text: null },
      { url: "https://www.paypal.com/help", text: null },
    ],
  },
  {
    name: "linkedin-style code after a line break inside one paragraph (html only)",
    subject: "Your LinkedIn verification code",
    text: null,
    html: `<html><body style="font-family:-apple-system,system-ui">
<p>Hi Tomasz,</p>
<p>Here's your verification code<br><span style="font-size:24px;font-weight:bold">705 233</span><br>This code will expire in 15 minutes.</p>
<p>If you didn't try to sign in, <a href="https://www.linkedin.com/psettings/change-password?trk=eml-verification&amp;lipi=urn%3Ali%3Apage%3Aemail">change your password</a>.</p>
<p style="font-size:12px;color:#666">© 2024 LinkedIn Corporation, 1000 West Maude Avenue, Sunnyvale, CA 94085.</p>
</body></html>`,
    codes: ["705233"],
    links: [
      {
        url: "https://www.linkedin.com/psettings/change-password?trk=eml-verification&lipi=urn%3Ali%3Apage%3Aemail",
        text: "change your password",
      },
    ],
  },
  {
    name: "backup codes listed one per line (text only)",
    subject: "Your new backup codes",
    text: `Hi Alex,

You generated new backup codes for your Acme account on May 3, 2024. Each code can be used once:

4829 1133
5521 0098
7730 4182
9046 2257
1358 6690

Keep them somewhere safe. Your old backup codes no longer work.

Acme Security · https://acme.example/security
`,
    html: null,
    codes: ["48291133", "55210098", "77304182", "90462257", "13586690"],
    links: [{ url: "https://acme.example/security", text: null }],
  },
];
