/** The UI's own paths, known to the route table and to the pages. */

/** The sign-in page. */
export const SIGN_IN_PATH = "/ui/login";

/** Where a reader goes after signing in when the page they wanted is not known. */
export const AFTER_SIGN_IN = "/ui/inboxes";
