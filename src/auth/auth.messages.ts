/** The auth messages of the spec's Errors table and decisions §3: a contract with existing clients. */
export const AUTH_MESSAGES = {
  usernameExists: 'Username already exists.',
  emailExists: 'Email already exists.',
  invalidEmail: 'Provide a valid email address.',
  invalidCredentials: 'Invalid credentials.',
  invalidRefresh: 'Invalid or expired refresh token.',
  unsupportedProvider: "Unsupported provider. Use 'apple' or 'google'.",
  invalidIdentityToken: 'Invalid identity token.',
  sameEmail: 'This is already your current email address.',
  socialEmailChange: 'Social login accounts cannot change their email address.',
  socialPasswordChange: 'Social login accounts cannot change their password.',
  currentPasswordIncorrect: 'Current password is incorrect.',
  passwordsDoNotMatch: 'New passwords do not match.',
  passwordChanged: 'Password changed successfully.',
  accountDeleted: 'Account deleted successfully.',
  passwordRequired: 'Password is required.',
  incorrectPassword: 'Incorrect password.',
  confirmDelete: "Send confirm_text set to 'DELETE' to delete your account.",
  deviceHeldElsewhere: 'This device token is registered to another account.',
} as const;

export const DELETE_CONFIRMATION = 'DELETE';
