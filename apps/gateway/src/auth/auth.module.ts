import { Global, Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { DatabaseModule } from '@app/persistence';
import { AdminBearerStrategy, PortalBearerStrategy, WebhookBearerStrategy } from './bearer.strategies';
import { PortalChangeRate } from './portal-change-rate';
import { UnknownPortalTokens } from './unknown-portal-tokens';

/**
 * Global for the one thing it exports: the guards every feature module uses charge a portal link's changes to
 * one PortalChangeRate for the whole app, which they reach wherever they are instantiated.
 */
@Global()
@Module({
  imports: [PassportModule.register({ session: false }), DatabaseModule],
  providers: [WebhookBearerStrategy, AdminBearerStrategy, PortalBearerStrategy, PortalChangeRate, UnknownPortalTokens],
  exports: [PortalChangeRate],
})
export class AuthModule {}
