import { Body, Controller, Delete, Get, Param, Post, Req, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { validatePortalLinkCreate } from '@app/contracts';
import { Actor, AdminReadGuard, AdminWriteGuard, Caller, PortalGuard } from '../auth/bearer.guards';
import type { Principal } from '../auth/bearer.strategies';
import { validatedBody } from '../http/validated-body.pipe';
import { validatedParameters } from '../http/validated-parameter.pipe';
import { PortalLinksService } from './portal-links.service';

/**
 * The address the admin reached this gateway at, for the link it is handed: the request's Host, and the scheme a
 * proxy in front says it was reached with (X-Forwarded-Proto), else this server's own.
 */
function originOf(req: FastifyRequest): string {
  const forwarded = String(req.headers['x-forwarded-proto'] ?? '')
    .split(',')[0]
    .trim();
  const scheme = forwarded === 'https' || forwarded === 'http' ? forwarded : req.protocol;
  return `${scheme}://${req.headers.host}`;
}

/** Admin API: a subscriber's portal links (the subscriber's own page is the console in portal mode). */
@ApiExcludeController()
@Controller()
export class PortalLinksController {
  constructor(private readonly links: PortalLinksService) {}

  @Post('subscriptions/:id/portal-links')
  @UseGuards(AdminWriteGuard)
  create(
    @Param('id', validatedParameters('createPortalLink')) id: string,
    @Body(validatedBody(validatePortalLinkCreate, { optional: true }))
    body: Parameters<PortalLinksService['create']>[1],
    @Req() req: FastifyRequest,
    @Actor() actor: string,
  ) {
    return this.links.create(id, body, originOf(req), actor);
  }

  @Get('subscriptions/:id/portal-links')
  @UseGuards(AdminReadGuard)
  list(@Param('id', validatedParameters('listPortalLinks')) id: string) {
    return this.links.list(id);
  }

  @Delete('subscriptions/:id/portal-links/:linkId')
  @UseGuards(AdminWriteGuard)
  revoke(
    @Param('id', validatedParameters('revokePortalLink')) id: string,
    @Param('linkId', validatedParameters('revokePortalLink')) linkId: string,
    @Actor() actor: string,
  ) {
    return this.links.revoke(id, linkId, actor);
  }

  @Get('portal/session')
  @UseGuards(PortalGuard)
  session(@Caller() caller: Principal) {
    return this.links.session(caller);
  }
}
