/** Shapes of the v4 responses the dashboard reads (src/api/*: the server is the reference). */
export interface Me {
  id: string | null;
  username: string;
  email: string;
  first_name: string;
  last_name: string;
  user_group: string;
  is_active: boolean;
  is_admin: boolean;
  provider: string;
  via: string;
  avatar?: string;
}

export interface LoginMethod {
  enable: boolean;
  name: string;
  position: number;
  type: string;
}

export interface OAuthMethod extends LoginMethod {
  provider_name: string;
  provider_image: string;
  url: string;
  auto_redirect: boolean;
}

export interface Providers {
  data: { internal: LoginMethod; ldap: LoginMethod; oauth2: OAuthMethod[] };
}

export interface LoginResponse {
  token: string;
  jti: string;
  expires_at: string;
  user: { username: string; is_admin: boolean };
}

export interface Widget {
  id: string;
  type: string;
  x: number;
  y: number;
  w: number;
  h: number;
  config?: Record<string, unknown>;
}

export interface Dashboard {
  id: string;
  name: string;
  position: number;
  layout: Widget[];
  created_at: string;
  updated_at: string;
}

export interface Setting {
  category: string;
  param: string;
  data: Record<string, unknown>;
  is_default: boolean;
}
