/** The identity providers whose tokens sign in (the `provider` of `social_identities`). */
export const SOCIAL_PROVIDERS = ['apple', 'google'] as const;
export type SocialProvider = (typeof SOCIAL_PROVIDERS)[number];
